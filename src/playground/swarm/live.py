"""The war story on a Swarm stack, step by step, every docker command through `Docker.run`
(printed first, so each step can be repeated by hand; docs/cluster.md).

Swarm mode on when none is active, and left afterwards; a registry started from Debian's
`docker-registry` package when none is given, and removed; the images built, tagged and
pushed; the stack deployed and waited for by the runner; K sender services at rate/K; their
records collected and merged; then everything removed: the senders, the stack, its network,
the registry, swarm mode as it was.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from playground.core.compose import Docker, DockerError
from playground.core.errors import UsageError
from playground.core.target import Target
from playground.core.target import plain_decimal as num
from playground.incident.openloop import OPENLOOP, incident_url, users
from playground.incident.settings import StorySettings
from playground.swarm.senders import MergedLoad, merge_senders
from playground.swarm.settings import LOCAL_REGISTRY, SwarmSettings, require_manager
from playground.swarm.stack import Stack, pushed_image, stack_from_config

STACK = "playground"
REGISTRY_CONTAINER = "playground-registry"
REGISTRY_IMAGE = "flask-playground/registry"
REGISTRY_COMPOSE = "compose/registry.yml"
SENDER_IMAGE = "flask-playground/openloop"
GWBRIDGE = "docker_gwbridge"  # left behind by `docker swarm leave --force`
POLL_S = 1.0


@dataclass
class SwarmRun:
    """One target on the stack: where its files go and what the user is told."""

    docker: Docker
    settings: StorySettings
    swarm: SwarmSettings
    run_dir: Path
    info: Callable[[str], None]
    wait_timeout_s: float


def _lines(docker: Docker, argv: list[str]) -> list[str]:
    return [x for x in docker.run(argv, quiet=True).stdout.splitlines() if x.strip()]


@contextmanager
def swarm_mode(docker: Docker) -> Iterator[None]:
    """A manager to deploy from: this node's swarm, or a single-node one started here and
    left afterwards (with the gateway bridge it leaves, unless that was there before)."""
    state = docker.run(
        ["docker", "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}"]
    ).stdout
    if require_manager(state):
        yield
        return
    had_bridge = bool(
        _lines(docker, ["docker", "network", "ls", "-q", "--filter", f"name=^{GWBRIDGE}$"])
    )
    docker.run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"])
    try:
        yield
    finally:
        docker.run(["docker", "swarm", "leave", "--force"], shielded=True)
        if not had_bridge:
            docker.run(["docker", "network", "rm", GWBRIDGE], check=False, shielded=True)


def _answers(registry: str) -> str | None:
    """None when the registry answers its API's root (200, or 401 asking for a login), else
    why not."""
    try:
        with urllib.request.urlopen(f"http://{registry}/v2/", timeout=5) as resp:
            return None if resp.status in (200, 401) else f"HTTP {resp.status}"
    except OSError as exc:
        return str(exc)


@contextmanager
def registry(docker: Docker, *, given: str | None, timeout_s: float) -> Iterator[str]:
    """The registry the images go through: the one given (it must answer), or one started
    here from compose/registry.yml (Debian's docker-registry) and removed afterwards."""
    if given is not None:
        if (why := _answers(given)) is not None:
            raise UsageError(f"the registry {given} refuses: {why}")
        yield given
        return
    docker.run(docker.compose(REGISTRY_COMPOSE, "build", "registry"))
    port = LOCAL_REGISTRY.rpartition(":")[2]
    docker.run(
        [
            *("docker", "run", "-d", "--name", REGISTRY_CONTAINER),
            *("-p", f"{LOCAL_REGISTRY}:{port}", REGISTRY_IMAGE),
        ]
    )
    try:
        deadline = time.monotonic() + timeout_s
        while (why := _answers(LOCAL_REGISTRY)) is not None:
            if time.monotonic() > deadline:
                raise DockerError(f"the registry started here never answered: {why}")
            time.sleep(POLL_S)
        yield LOCAL_REGISTRY
    finally:
        docker.run(["docker", "rm", "-f", REGISTRY_CONTAINER], check=False, shielded=True)


def push(docker: Docker, *, target: Target, images: dict[str, str]) -> None:
    """Build the target's images and the sender's, tag each into the registry, push."""
    docker.run(docker.compose(target.compose_file, "build"))
    docker.run(docker.compose("compose/loadgen.yml", "build", "openloop"))
    for local, pushed in images.items():
        docker.run(["docker", "tag", local, pushed])
        docker.run(["docker", "push", pushed])


def stack_for(run: SwarmRun, *, target: Target, registry: str, tag: str) -> Stack:
    """The stack file from the target's compose files, written to the run's folder; what
    Swarm cannot use is said."""
    argv = run.docker.compose(target.compose_file, "config", "--format", "json")
    config = json.loads(run.docker.run(argv).stdout)
    stack = stack_from_config(
        config=config,
        registry=registry,
        tag=tag,
        app=target.sampled[0],
        replicas=run.swarm.replicas,
    )
    for removed in stack.removed:
        run.info(removed.text())
    (run.run_dir / "stack.json").write_text(json.dumps(stack.document, indent=2) + "\n")
    return stack


@contextmanager
def deployed(run: SwarmRun) -> Iterator[None]:
    """The stack up until the block ends, then removed with its network."""
    docker = run.docker
    try:
        docker.run(["docker", "stack", "deploy", "-c", str(run.run_dir / "stack.json"), STACK])
        yield
    finally:
        docker.run(["docker", "stack", "rm", STACK], check=False, shielded=True)
        deadline = time.monotonic() + run.wait_timeout_s
        label = f"label=com.docker.stack.namespace={STACK}"
        while _lines(docker, ["docker", "network", "ls", "-q", "--filter", label]):
            if time.monotonic() > deadline:
                raise DockerError(f"the stack's network outlived {run.wait_timeout_s:g} s")
            time.sleep(POLL_S)


def wait_ready(run: SwarmRun, *, target: Target) -> None:
    """Every service at its replicas, then one real request through the front: the runner
    waits, since Swarm does not wait on health checks. A replica that never becomes ready
    ends the run with the services' state."""
    deadline = time.monotonic() + run.wait_timeout_s
    argv = ["docker", "stack", "services", STACK, "--format", "{{.Name}} {{.Replicas}}"]
    url = f"http://127.0.0.1:{target.host_port}/?delay=0"
    while True:
        replicas = [line.split()[-1] for line in _lines(run.docker, argv)]
        ready = replicas and all(a == b for a, _, b in (r.partition("/") for r in replicas))
        if ready and _answers_page(url):
            return
        if time.monotonic() > deadline:
            state = "; ".join(_lines(run.docker, argv))
            raise DockerError(f"not ready after {run.wait_timeout_s:g} s: {state}")
        time.sleep(POLL_S)


def _answers_page(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def sender_commands(*, settings: StorySettings, target: Target, senders: int) -> list[list[str]]:
    """The generator's command line for each sender: rate/K each, its own seed, the
    incident's control request from the first alone; the JSON goes to its standard output."""
    out = []
    for i in range(senders):
        s = replace(settings, seed=settings.seed + i)
        control = ["--at", f"{num(s.before_s)}:POST:{incident_url(s)}"] if i == 0 else []
        out.append(
            [
                *("python", OPENLOOP, "--url", target.url(delay=s.normal_delay)),
                *("--rate", num(s.rate / senders), "--duration", num(s.duration)),
                *users(s),
                *control,
            ]
        )
    return out


def run_senders(run: SwarmRun, *, target: Target, image: str) -> MergedLoad:
    """K one-task job services on the stack's network, on whichever nodes Swarm picks; each
    sender's JSON read from its log, then merged."""
    docker = run.docker
    names = [f"{STACK}_sender{i}" for i in range(run.swarm.senders)]
    commands = sender_commands(settings=run.settings, target=target, senders=run.swarm.senders)
    try:
        for name, command in zip(names, commands, strict=True):
            docker.run(
                [
                    *("docker", "service", "create", "--detach", "--name", name),
                    *("--mode", "replicated-job", "--network", f"{STACK}_default"),
                    *("--restart-condition", "none", image, *command),
                ]
            )
        parts = [_sender_output(run, name) for name in names]
    finally:
        docker.run(["docker", "service", "rm", *names], check=False, shielded=True)
    for i, part in enumerate(parts):
        (run.run_dir / f"sender{i}.json").write_text(json.dumps(part) + "\n")
    return merge_senders(parts=parts)


def _sender_output(run: SwarmRun, name: str) -> dict[str, Any]:
    """A sender's JSON once its task is complete; a sender that failed or left says so."""
    deadline = time.monotonic() + run.settings.duration + run.wait_timeout_s
    state_argv = ["docker", "service", "ps", name, "--format", "{{.CurrentState}} {{.Error}}"]
    while not (states := _lines(run.docker, state_argv)) or not states[0].startswith("Complete"):
        if states and states[0].split()[0] in ("Failed", "Rejected", "Shutdown", "Orphaned"):
            raise DockerError(f"sender {name} ended before its records: {states[0]}")
        if time.monotonic() > deadline:
            raise DockerError(f"sender {name} never finished: {'; '.join(states)}")
        time.sleep(POLL_S)
    log = run.docker.run(["docker", "service", "logs", "--raw", name]).stdout
    try:
        data: dict[str, Any] = json.loads(log)
    except ValueError:
        raise DockerError(f"sender {name} wrote no readable records") from None
    return data


def nodes(docker: Docker) -> int:
    """How many nodes the swarm has."""
    return len(_lines(docker, ["docker", "node", "ls", "-q"]))


def run_swarm(run: SwarmRun, *, target: Target) -> MergedLoad:
    """One target through the incident on the stack, leaving the machine as it was found."""
    tag = time.strftime("%Y%m%d-%H%M%S")
    with ExitStack() as steps:
        steps.enter_context(swarm_mode(run.docker))
        where = steps.enter_context(
            registry(run.docker, given=run.swarm.registry, timeout_s=run.wait_timeout_s)
        )
        stack = stack_for(run, target=target, registry=where, tag=tag)
        sender = pushed_image(SENDER_IMAGE, registry=where, tag=tag)
        push(run.docker, target=target, images={**stack.images, SENDER_IMAGE: sender})
        steps.enter_context(deployed(run))
        wait_ready(run, target=target)
        run.info(
            f"{nodes(run.docker)} node(s), {run.swarm.replicas} replica(s) of {stack.app}, "
            f"{run.swarm.senders} sender(s) at {run.settings.rate / run.swarm.senders:g}/s each"
        )
        return run_senders(run, target=target, image=sender)

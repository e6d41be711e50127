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
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from playground.core.compose import Docker, DockerError
from playground.core.errors import UsageError
from playground.core.target import Target
from playground.incident.swarmresults import SwarmShape
from playground.swarm.engine import POLL_S, STACK, SwarmRun, containers_gone, lines
from playground.swarm.nodeloss import LossWatch
from playground.swarm.senderjobs import run_senders
from playground.swarm.senders import MergedLoad
from playground.swarm.settings import LOCAL_REGISTRY, require_manager
from playground.swarm.stack import Stack, pushed_image, stack_from_config

REGISTRY_CONTAINER = "playground-registry"
REGISTRY_IMAGE = "flask-playground/registry"
REGISTRY_COMPOSE = "compose/registry.yml"
SENDER_IMAGE = "flask-playground/openloop"
GWBRIDGE = "docker_gwbridge"  # left behind by `docker swarm leave --force`


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
        lines(docker, ["docker", "network", "ls", "-q", "--filter", f"name=^{GWBRIDGE}$"])
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


def require_registry(given: str | None) -> None:
    """A registry given must answer before anything is started."""
    if given is not None and (why := _answers(given)) is not None:
        raise UsageError(f"the registry {given} refuses: {why}")


@contextmanager
def registry(docker: Docker, *, given: str | None, timeout_s: float) -> Iterator[str]:
    """The registry the images go through: the one given (it must answer), or one started
    here from compose/registry.yml (Debian's docker-registry) and removed afterwards."""
    if given is not None:
        require_registry(given)
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
        docker.run(["docker", "rm", "-f", "-v", REGISTRY_CONTAINER], check=False, shielded=True)


def push(docker: Docker, *, images: dict[str, str], pushed: list[str]) -> None:
    """Tag each built image into the registry and push it; each name kept in `pushed`."""
    for local, name in images.items():
        docker.run(["docker", "tag", local, name])
        pushed.append(name)
        docker.run(["docker", "push", name])


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
        app_constraint=run.swarm.app_constraint,
    )
    for removed in stack.removed:
        run.info(removed.text())
    (run.run_dir / "stack.json").write_text(json.dumps(stack.document, indent=2) + "\n")
    return stack


def deploy_command(stack_file: Path) -> list[str]:
    return ["docker", "stack", "deploy", "-c", str(stack_file), STACK]


@contextmanager
def deployed(run: SwarmRun, stack_file: Path) -> Iterator[None]:
    """The stack up until the block ends, then removed with its network."""
    docker = run.on_swarm
    try:
        docker.run(deploy_command(stack_file))
        yield
    finally:
        docker.run(["docker", "stack", "rm", STACK], check=False, shielded=True)
        deadline = time.monotonic() + run.wait_timeout_s
        label = f"label=com.docker.stack.namespace={STACK}"
        containers_gone(run, [label])
        while lines(docker, ["docker", "network", "ls", "-q", "--filter", label]):
            if time.monotonic() > deadline:
                raise DockerError(f"the stack's network outlived {run.wait_timeout_s:g} s")
            time.sleep(POLL_S)


def _running(run: SwarmRun, wanted: dict[str, int]) -> tuple[bool, str]:
    """Whether each service has its wanted replicas running (Swarm counts a task with a
    health check as running once it is healthy), and the services' state."""
    argv = ["docker", "stack", "services", STACK, "--format", "{{.Name}} {{.Replicas}}"]
    listed = lines(run.on_swarm, argv)
    counts = {}
    for line in listed:
        name, _, replicas = line.partition(" ")
        counts[name.removeprefix(f"{STACK}_")] = replicas.split()[0].partition("/")[0]
    ok = all(counts.get(name) == str(n) for name, n in wanted.items())
    return ok, "; ".join(listed)


def wait_ready(run: SwarmRun, *, target: Target, stack: Stack) -> None:
    """The services up level by level in their depends_on order (a later level scaled up from
    0 once the one before runs), then one real request through the front: the runner waits,
    since Swarm neither orders services nor waits on health checks. A replica that never
    becomes ready ends the measurement with the services' state."""
    deadline = time.monotonic() + run.wait_timeout_s
    wanted: dict[str, int] = {}
    for i, level in enumerate(stack.levels):
        wanted.update({name: stack.replicas[name] for name in level})
        if i > 0:
            scale = [f"{STACK}_{name}={stack.replicas[name]}" for name in level]
            run.on_swarm.run(["docker", "service", "scale", "--detach", *scale])
        last = i == len(stack.levels) - 1
        while True:
            ok, state = _running(run, wanted)
            if ok and (not last or _answers_page(front_url(run, stack, target=target))):
                break
            if time.monotonic() > deadline:
                raise DockerError(f"not ready after {run.wait_timeout_s:g} s: {state}")
            time.sleep(POLL_S)


def front_url(run: SwarmRun, stack: Stack, *, target: Target) -> str:
    """The front's page from this machine: the address of the node its task runs on (ports
    are published in host mode), 127.0.0.1 on a swarm of this machine alone."""
    port = stack.front_port or target.host_port
    host = "127.0.0.1"
    if stack.front is not None:
        argv = ["docker", "service", "ps", f"{STACK}_{stack.front}"]
        argv += ["--filter", "desired-state=running", "--format", "{{.Node}}"]
        if found := lines(run.on_swarm, argv):
            inspect = ["docker", "node", "inspect", "--format", "{{.Status.Addr}}", found[0]]
            host = next(iter(lines(run.on_swarm, inspect)), host)
    return f"http://{host}:{port}/?delay=0"


def placement(docker: Docker) -> dict[str, list[str]]:
    """The node of each running task of the stack, by service, as `docker stack ps` lists
    them."""
    argv = ["docker", "stack", "ps", STACK, "--filter", "desired-state=running"]
    argv += ["--format", "{{.Name}} {{.Node}}"]
    where: dict[str, list[str]] = {}
    for line in lines(docker, argv):
        name, _, node = line.partition(" ")
        service = name.removeprefix(f"{STACK}_").rpartition(".")[0] or name
        where.setdefault(service, []).append(node.strip())
    return {service: sorted(nodes) for service, nodes in sorted(where.items())}


def _answers_page(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def nodes(docker: Docker) -> int:
    """How many nodes the swarm has."""
    return len(lines(docker, ["docker", "node", "ls", "-q"]))


@dataclass(frozen=True)
class Stage:
    """What every target of a run shares: the registry and the run's tag, the sender's image
    in it."""

    registry: str
    tag: str
    sender: str
    #: Every name pushed, untagged when the run ends (the local images stay).
    pushed: list[str] = field(default_factory=list)


@contextmanager
def staged(run: SwarmRun) -> Iterator[Stage]:
    """Swarm mode and a registry for the whole run, the sender's image pushed; all removed
    when the block ends (swarm mode left only if it was started here)."""
    tag = time.strftime("%Y%m%d-%H%M%S")
    with ExitStack() as steps:
        steps.enter_context(swarm_mode(run.on_swarm))
        where = steps.enter_context(
            registry(run.docker, given=run.swarm.registry, timeout_s=run.wait_timeout_s)
        )
        stage = Stage(
            registry=where, tag=tag, sender=pushed_image(SENDER_IMAGE, registry=where, tag=tag)
        )
        steps.callback(_untag, run.docker, stage.pushed)
        if run.build:
            run.docker.run(run.docker.compose("compose/loadgen.yml", "build", "openloop"))
        push(run.docker, images={SENDER_IMAGE: stage.sender}, pushed=stage.pushed)
        yield stage


def _untag(docker: Docker, names: list[str]) -> None:
    if names:
        docker.run(["docker", "rmi", *dict.fromkeys(names)], check=False, shielded=True)


def pushed_stack(run: SwarmRun, stage: Stage, *, target: Target) -> Stack:
    """The target's stack file written, its images built and pushed."""
    stack = stack_for(run, target=target, registry=stage.registry, tag=stage.tag)
    if run.build:
        run.docker.run(run.docker.compose(target.compose_file, "build"))
    push(run.docker, images=stack.images, pushed=stage.pushed)
    return stack


@dataclass(frozen=True)
class OnStack:
    """One measurement on the stack: the senders' merged records and the stack's shape."""

    merged: MergedLoad
    shape: SwarmShape


def measure(
    run: SwarmRun, stage: Stage, stack: Stack, *, target: Target, stack_file: Path
) -> OnStack:
    """One target through the incident on a freshly deployed stack, removed afterwards."""
    with deployed(run, stack_file):
        wait_ready(run, target=target, stack=stack)
        count = nodes(run.on_swarm)
        placed = placement(run.on_swarm)
        run.info(
            f"{count} node(s), {run.swarm.replicas} replica(s) of {stack.app}, "
            f"{run.swarm.senders} sender(s) at {run.settings.rate / run.swarm.senders:g}/s each"
        )
        watch = None
        if run.swarm.lose is not None:
            watch = LossWatch(run, run.swarm.lose)
            watch.start()
        try:
            app_on = placed.get(stack.app, [])
            merged, where = run_senders(
                run,
                target=target,
                image=stage.sender,
                app_on=app_on,
                started=None if watch is None else watch.senders_started,
            )
        except BaseException:
            if watch is not None:
                watch.finish(t0_wall=None)
            raise
        lost = None if watch is None else watch.finish(t0_wall=merged.result.get("t0_wall"))
    senders = [replace(s, node=node) for s, node in zip(merged.senders, where, strict=True)]
    shape = SwarmShape(
        nodes=count,
        replicas=run.swarm.replicas,
        app=stack.app,
        registry=_registry_text(run, stage),
        senders=senders,
        removed=[r.text() for r in stack.removed],
        stack_file=str(stack_file),
        placement=placed,
        lost=lost,
    )
    return OnStack(merged=replace(merged, senders=senders), shape=shape)


def _registry_text(run: SwarmRun, stage: Stage) -> str:
    if run.swarm.engines:
        return f"the engines' own, at {stage.registry} on every node"
    return stage.registry if run.swarm.registry else f"started here on {stage.registry}"

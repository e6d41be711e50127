"""The senders of `playground swarm`: K one-task job services of the open-loop generator on
the stack's network, at rate/K each, each handing its records back through its task's log;
then merged (:mod:`playground.swarm.senders`)."""

from __future__ import annotations

import base64
import gzip
import json
import shlex
import time
from dataclasses import replace
from typing import Any

from playground.core.compose import Docker, DockerError
from playground.core.target import Target
from playground.core.target import plain_decimal as num
from playground.incident.openloop import incident_url, openloop, users
from playground.incident.settings import StorySettings
from playground.swarm.engine import POLL_S, STACK, SwarmRun, containers_gone, lines
from playground.swarm.senders import MergedLoad, merge_senders

#: Where a sender writes its JSON inside its task, and the mark on each line of it in the log.
SENDER_OUT = "/tmp/openloop.json"
SENDER_MARK = "openloop-json"
#: Base64 line width: well under the 16 KiB at which Docker's log drivers split a line.
LOG_LINE = 4096


def sender_commands(*, settings: StorySettings, target: Target, senders: int) -> list[list[str]]:
    """The generator's command line for each sender: rate/K each, its own seed, the
    incident's control request from the first alone (its JSON is written by `in_task`)."""
    out = []
    for i in range(senders):
        s = replace(settings, seed=settings.seed + i)
        control = ["--at", f"{num(s.before_s)}:POST:{incident_url(s)}"] if i == 0 else []
        out.append(
            openloop(
                target.url(delay=s.normal_delay),
                rate=s.rate / senders,
                duration=s.duration,
                options=[*users(s), *control],
            )
        )
    return out


#: The generator's exit when it ran to the end but its self-check failed: its records stand,
#: marked invalid (loadgen/openloop.py), and the merged run is not trusted.
SELF_CHECK_FAILED = 3


def in_task(argv: list[str]) -> list[str]:
    """A sender's command as its task runs it: the generator writes its JSON to a file, which
    then goes to the task's log gzipped, in base64 lines each marked (a log is the one way
    out of a task on any node; a long line would be split by the log driver). The task ends
    well when the generator did, its self-check passed or not."""
    script = (
        f"{shlex.join([*argv, '--out', SENDER_OUT])}; status=$?; "
        f"if [ -s {SENDER_OUT} ]; then gzip -c {SENDER_OUT} "
        f"| base64 -w {LOG_LINE} | sed 's/^/{SENDER_MARK} /'; fi; "
        f'[ "$status" -eq 0 ] || [ "$status" -eq {SELF_CHECK_FAILED} ]'
    )
    return ["sh", "-c", script]


def from_log(log: str) -> dict[str, Any]:
    """A sender's JSON back from its task's log (the marked lines, in order); anything else
    the task printed is passed over."""
    mark = SENDER_MARK + " "
    encoded = "".join(line[len(mark) :] for line in log.splitlines() if line.startswith(mark))
    if not encoded:
        raise ValueError("no records in the log")
    try:
        data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(encoded)))
    except (OSError, EOFError, ValueError) as exc:
        raise ValueError(f"the records in the log are cut or broken: {exc}") from None
    return data


def sender_service(
    name: str, *, image: str, command: list[str], constraint: str | None = None
) -> list[str]:
    """The sender as a one-task job service on the stack's network (on the nodes that
    `constraint` allows, when there is one)."""
    placed = [] if constraint is None else ["--constraint", constraint]
    return [
        *("docker", "service", "create", "--detach", "--name", name),
        *("--mode", "replicated-job", "--network", f"{STACK}_default", *placed),
        *("--restart-condition", "none", image, *in_task(command)),
    ]


def sender_names(senders: int) -> list[str]:
    return [f"{STACK}_sender{i}" for i in range(senders)]


def sender_services(
    run: SwarmRun, *, target: Target, image: str, app_on: list[str]
) -> list[list[str]]:
    """The senders' `docker service create` commands, each placed by the run's settings
    (apart from the app's nodes where there are others)."""
    names = sender_names(run.swarm.senders)
    commands = sender_commands(settings=run.settings, target=target, senders=run.swarm.senders)
    return [
        sender_service(
            name,
            image=image,
            command=argv,
            constraint=run.swarm.sender_constraint(i, app_on=app_on),
        )
        for i, (name, argv) in enumerate(zip(names, commands, strict=True))
    ]


def run_senders(
    run: SwarmRun, *, target: Target, image: str, app_on: list[str]
) -> tuple[MergedLoad, list[str]]:
    """K one-task job services on the stack's network, on the nodes the settings give (apart
    from the app's, `app_on`, where there are others) or wherever Swarm picks; each sender's
    JSON read from its log, then merged; and the node each ran on."""
    docker = run.on_swarm
    names = sender_names(run.swarm.senders)
    try:
        for argv in sender_services(run, target=target, image=image, app_on=app_on):
            docker.run(argv)
        parts = [_sender_output(run, name) for name in names]
        where = [_node(docker, name) for name in names]
    finally:
        docker.run(["docker", "service", "rm", *names], check=False, shielded=True)
        containers_gone(run, [f"label=com.docker.swarm.service.name={n}" for n in names])
    for i, part in enumerate(parts):
        (run.run_dir / f"sender{i}.json").write_text(json.dumps(part) + "\n")
    return merge_senders(parts=parts), where


def _node(docker: Docker, name: str) -> str:
    found = lines(docker, ["docker", "service", "ps", name, "--format", "{{.Node}}"])
    return found[0] if found else "-"


def _said(docker: Docker, name: str) -> str:
    """The last line a sender printed that is not its records, to say why it failed."""
    argv = ["docker", "service", "logs", "--raw", name]
    log = docker.run(argv, check=False, quiet=True, shielded=True).stdout
    said = [x for x in log.splitlines() if x.strip() and not x.startswith(SENDER_MARK)]
    return f"; it said: {said[-1][-300:]}" if said else ""


def _sender_output(run: SwarmRun, name: str) -> dict[str, Any]:
    """A sender's JSON once its task is complete; a sender that failed or left says so."""
    deadline = time.monotonic() + run.settings.duration + run.wait_timeout_s
    state_argv = ["docker", "service", "ps", name, "--format", "{{.CurrentState}} {{.Error}}"]
    while not (states := lines(run.on_swarm, state_argv)) or not states[0].startswith("Complete"):
        if states and states[0].split()[0] in ("Failed", "Rejected", "Shutdown", "Orphaned"):
            said = _said(run.on_swarm, name)
            raise DockerError(f"sender {name} ended before its records: {states[0]}{said}")
        if time.monotonic() > deadline:
            raise DockerError(f"sender {name} never finished: {'; '.join(states)}")
        time.sleep(POLL_S)
    log = run.on_swarm.run(["docker", "service", "logs", "--raw", name], quiet=True).stdout
    try:
        return from_log(log)
    except ValueError as exc:
        raise DockerError(f"sender {name} wrote no readable records ({exc})") from None

"""The senders of `playground swarm`: K containers of the open-loop generator on the stack's
attachable network, each on its node's engine at the story's generator's CPU weight, at
rate/K each, each handing its records back through its log; then merged
(:mod:`playground.swarm.senders`)."""

from __future__ import annotations

import base64
import gzip
import json
import shlex
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from playground.core.compose import Docker, DockerError
from playground.core.target import Target
from playground.core.target import plain_decimal as num
from playground.incident.openloop import GENERATOR_CPU_SHARES, incident_url, openloop, users
from playground.incident.settings import StorySettings
from playground.swarm import engines
from playground.swarm.engine import POLL_S, STACK, SwarmRun, lines
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
    """A sender's command as its container runs it: the generator writes its JSON to a file,
    which then goes to the container's log gzipped, in base64 lines each marked (the log is
    read through any node's engine alike; a long line would be split by the log driver). It
    ends well when the generator did, its self-check passed or not."""
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


@dataclass(frozen=True)
class SenderJob:
    """One sender: its container's name, the node whose engine runs it (None: the one engine
    of a single-node swarm) and its `docker run` command."""

    name: str
    node: str | None
    argv: list[str]


def sender_container(name: str, *, image: str, command: list[str]) -> list[str]:
    """The sender as a container of its node's engine on the stack's attachable network, at
    the story's generator's CPU weight: a Swarm service cannot be given a CPU weight, and at
    Docker's default one a sender's sends come late on a busy machine."""
    return [
        *("docker", "run", "--detach", "--name", name, "--network", f"{STACK}_default"),
        *("--cpu-shares", str(GENERATOR_CPU_SHARES), image, *in_task(command)),
    ]


def sender_names(senders: int) -> list[str]:
    return [f"{STACK}_sender{i}" for i in range(senders)]


def sender_jobs(run: SwarmRun, *, target: Target, image: str, app_on: list[str]) -> list[SenderJob]:
    """The senders, each on the node the run's settings give it (apart from the app's nodes
    where there are others)."""
    names = sender_names(run.swarm.senders)
    commands = sender_commands(settings=run.settings, target=target, senders=run.swarm.senders)
    return [
        SenderJob(
            name=name,
            node=run.swarm.sender_node(i, app_on=app_on),
            argv=sender_container(name, image=image, command=argv),
        )
        for i, (name, argv) in enumerate(zip(names, commands, strict=True))
    ]


def on_its_engine(job: SenderJob, argv: list[str]) -> list[str]:
    """A docker command for the engine the sender runs on: its node's (--engines), or this
    machine's."""
    return argv if job.node is None else engines.on(job.node, *argv[1:])


def _docker(run: SwarmRun, job: SenderJob) -> Docker:
    """What runs a command for the sender's engine: this machine's docker, which reaches a
    node's engine through `docker exec` (:func:`on_its_engine`), or the single engine."""
    return run.on_swarm if job.node is None else run.docker


def run_senders(
    run: SwarmRun,
    *,
    target: Target,
    image: str,
    app_on: list[str],
    started: threading.Event | None = None,
) -> tuple[MergedLoad, list[str]]:
    """K sender containers on the stack's network, on the nodes the settings give (apart from
    the app's, `app_on`, where there are others; each such node's container at the senders'
    weight while they run) or on the one engine; `started` is set once
    every one is running; each sender's JSON read from its log, then merged; and the node each
    ran on."""
    jobs = sender_jobs(run, target=target, image=image, app_on=app_on)
    # A node's engine pulls the image from the nodes' registry first, so the senders start
    # within a second of each other rather than one pull apart.
    for job in {job.node: job for job in jobs if job.node is not None}.values():
        _docker(run, job).run(on_its_engine(job, ["docker", "pull", "--quiet", image]))
    nodes = [job.node for job in jobs if job.node is not None]
    try:
        with engines.weighted(run.docker, nodes, shares=GENERATOR_CPU_SHARES):
            for job in jobs:
                _docker(run, job).run(on_its_engine(job, job.argv))
            if started is not None:
                started.set()
            parts = [_sender_output(run, job) for job in jobs]
        where = [job.node or _engine_name(run) for job in jobs]
    finally:
        for job in jobs:
            gone = on_its_engine(job, ["docker", "rm", "--force", "--volumes", job.name])
            _docker(run, job).run(gone, check=False, quiet=True, shielded=True)
    for i, part in enumerate(parts):
        (run.run_dir / f"sender{i}.json").write_text(json.dumps(part) + "\n")
    return merge_senders(parts=parts), where


def _engine_name(run: SwarmRun) -> str:
    found = lines(run.on_swarm, ["docker", "info", "--format", "{{.Name}}"])
    return found[0] if found else "-"


def _said(log: str) -> str:
    """The last line a sender printed that is not its records, to say why it failed."""
    said = [x for x in log.splitlines() if x.strip() and not x.startswith(SENDER_MARK)]
    return f"; it said: {said[-1][-300:]}" if said else ""


def _sender_output(run: SwarmRun, job: SenderJob) -> dict[str, Any]:
    """A sender's JSON once its container has exited; a sender that failed says so."""
    docker = _docker(run, job)
    deadline = time.monotonic() + run.settings.duration + run.wait_timeout_s
    state = on_its_engine(
        job, ["docker", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", job.name]
    )
    logs = on_its_engine(job, ["docker", "logs", job.name])
    while True:
        proc = docker.run(state, check=False, quiet=True)
        status, _, code = proc.stdout.strip().partition(" ")
        if proc.returncode != 0 or status in ("dead", "removing"):
            raise DockerError(f"sender {job.name} is gone before its records: {proc.stdout}")
        if status == "exited":
            break
        if time.monotonic() > deadline:
            raise DockerError(f"sender {job.name} never finished: {status}")
        time.sleep(POLL_S)
    log = docker.run(logs, quiet=True, check=False)
    if code != "0":
        said = _said(log.stdout + log.stderr)
        raise DockerError(f"sender {job.name} ended before its records: exit {code}{said}")
    try:
        return from_log(log.stdout)
    except ValueError as exc:
        raise DockerError(f"sender {job.name} wrote no readable records ({exc})") from None

"""The story against a service already running (`playground story --url URL`): the same
users, generator, self-check and analysis as the story's own targets, and nothing brought up
or down but the generator and, with `--slow-dependency`, the delay proxy (:mod:`.delayproxy`).

The incident is made where the reader chooses: the delay proxy in front of the service's
dependency (the generator sends its admin request at the incident's time), `tc netem` on a
container's packets to a host (where the kernel has the qdisc), or the reader's own commands
at the incident's start and end (`--incident-start`, `--incident-end`), run on this host.
Nothing on the server's side is sampled (no nginx log, no threads, no queues): the report
says so.
"""

from __future__ import annotations

import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace

from playground.core.compose import OPENLOOP_IMAGE, Docker, DockerError, shown
from playground.incident.openloop import GENERATOR_CPU_SHARES, openloop
from playground.incident.outside import IncidentCommand, OutsideTarget
from playground.incident.settings import StoryError, StorySettings
from playground.incident.storyresults import StoryTarget
from playground.story import delayproxy, findings, netem
from playground.story.delayproxy import Dependency
from playground.story.plan import users
from playground.story.run import (
    RunInProgress,
    bound,
    measure_incident,
    read_output,
)

#: How long the service may take to answer its URL with a 2xx before the load (it may be
#: becoming healthy once the proxy it is pointed at has started).
ANSWER_WITHIN_S = 60.0
#: At most this long for one of the reader's incident commands.
COMMAND_TIMEOUT_S = 120.0
HOST_NETWORK = "host"


@dataclass(frozen=True)
class OutsideSettings:
    """What `--url` and its flags say; `check` refuses what cannot make a run."""

    url: str
    name: str = "your-service"
    network: str = HOST_NETWORK
    dependency: Dependency | None = None
    netem: netem.NetemTarget | None = None
    incident_start: str | None = None
    incident_end: str | None = None

    def check(self, story: StorySettings) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise StoryError(f"--url {self.url!r}: expected http://HOST[:PORT]/PATH")
        if (self.dependency or self.netem) and self.network == HOST_NETWORK:
            raise StoryError(
                "--slow-dependency and --slow-netem act on the service's Docker network: name "
                "it with --network NAME (docker network ls)"
            )
        if self.dependency and self.netem:
            raise StoryError("--slow-dependency and --slow-netem: choose one")
        if self.incident_end and not self.incident_start:
            raise StoryError("--incident-end without --incident-start: nothing to end")
        if (self.dependency or self.netem) and story.extra_delay >= story.timeout:
            raise StoryError(
                f"the incident adds {story.extra_delay:g} s (--incident-delay minus "
                f"--normal-delay) to every call, at or past the users' patience "
                f"({story.timeout:g} s, --timeout): every visit would fail; lower it"
            )

    @property
    def mechanism(self) -> str:
        if self.dependency:
            return "delay-proxy"
        if self.netem:
            return "netem"
        return "commands" if self.incident_start else "none"


@dataclass
class _Timed:
    """The incident's host-side actions (the reader's commands, netem), run at their time."""

    actions: list[tuple[str, float, Callable[[], tuple[int | None, str]]]]
    done: list[tuple[str, float, int | None, str]] = field(default_factory=list)
    _timers: list[threading.Timer] = field(default_factory=list)

    def start(self) -> None:
        for when, at, action in self.actions:
            timer = threading.Timer(at, self._run, (when, action))
            timer.daemon = True
            timer.start()
            self._timers.append(timer)

    def _run(self, when: str, action: Callable[[], tuple[int | None, str]]) -> None:
        started = time.time()
        code, output = action()
        self.done.append((when, started, code, output))

    def finish(self) -> None:
        """Cancel what has not run; once the incident has started, its end always runs."""
        for timer in self._timers:
            timer.cancel()
            if timer.is_alive():
                timer.join(timeout=COMMAND_TIMEOUT_S + 5)
        ran = {when for when, *_ in self.done}
        if "start" in ran and "end" not in ran:
            for when, _, action in self.actions:
                if when == "end":
                    self._run(when, action)


def shell(command: str) -> Callable[[], tuple[int | None, str]]:
    def run() -> tuple[int | None, str]:
        try:
            proc = subprocess.run(
                command, shell=True, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            return None, f"timed out after {COMMAND_TIMEOUT_S:g} s"
        return proc.returncode, (proc.stdout + proc.stderr)[-4000:]

    return run


def _actions(story: RunInProgress, outside: OutsideSettings) -> _Timed:
    s = story.run.story
    start, end = s.before_s, s.before_s + s.incident_s
    actions: list[tuple[str, float, Callable[[], tuple[int | None, str]]]] = []
    if outside.netem is not None:
        on, off = outside.netem.commands(story.docker, delay=s.extra_delay)
        actions += [("start", start, on), ("end", end, off)]
    if outside.incident_start:
        actions.append(("start", start, shell(outside.incident_start)))
    if outside.incident_end:
        actions.append(("end", end, shell(outside.incident_end)))
    return _Timed(actions)


def check_answers(story: RunInProgress, outside: OutsideSettings) -> None:
    """The URL answers with a 2xx from where the generator runs, or a clear error."""
    deadline = time.monotonic() + ANSWER_WITHIN_S
    status, body = 0, ""
    while time.monotonic() < deadline:
        status, body = story.docker.fetch(
            network=outside.network, url=outside.url, timeout_s=story.run.story.timeout
        )
        if 200 <= status < 300:
            return
        time.sleep(2)
    said = f"answered {status}: {body.strip()[:200]}" if status else f"did not answer ({body})"
    raise DockerError(
        f"--url {outside.url} {said}, from the network {outside.network}, within "
        f"{ANSWER_WITHIN_S:g} s: is the service up, and is it on that network?"
    )


def preflight(docker: Docker, outside: OutsideSettings) -> None:
    """Everything checked before a run is made, the proxy starts or any load is sent."""
    if outside.network != HOST_NETWORK and not docker.network_exists(outside.network):
        raise StoryError(f"--network {outside.network}: no such Docker network (docker network ls)")
    if outside.netem is not None:
        outside.netem.check(docker)
    if outside.dependency is not None:
        delayproxy.check_name_free(docker, outside.dependency, network=outside.network)


@contextmanager
def _incident_made(story: RunInProgress, outside: OutsideSettings) -> Iterator[list[str]]:
    """The proxy up (if asked for) for the block; the generator's --at options yielded."""
    s = story.run.story
    with ExitStack() as stack:
        dep = outside.dependency
        if dep is None:
            yield []
            return
        stack.enter_context(
            delayproxy.delay_proxy(
                story.docker,
                dep,
                network=outside.network,
                run_id=story.run.run_id,
                info=story.info,
            )
        )
        url = dep.incident_url(seconds=s.extra_delay, lasts=s.incident_s)
        yield ["--at", f"{s.before_s:g}:POST:{url}"]


def _outside_target(outside: OutsideSettings, *, extra_delay: float) -> OutsideTarget:
    """The service by URL, as its results name it (before the incident's commands)."""
    dependency = outside.dependency
    return OutsideTarget(
        url=outside.url,
        network=outside.network,
        mechanism=outside.mechanism,
        dependency=f"{dependency.name}={dependency.url}" if dependency else None,
        added_delay_s=extra_delay if outside.dependency or outside.netem else None,
    )


def _incident_commands(
    outside: OutsideSettings, timed: _Timed, *, t0_wall: float
) -> list[IncidentCommand]:
    """The commands that made the incident, in the order they ran, on the generator's clock."""
    return [
        IncidentCommand(
            when=when,
            command=_said(outside, when),
            at_s=round(at - t0_wall, 3),
            exit=code,
            output=text,
        )
        for when, at, code, text in sorted(timed.done, key=lambda d: d[1])
    ]


def run_outside(story: RunInProgress, outside: OutsideSettings) -> StoryTarget:
    """The service through the incident, measured from the generator's side; saved."""
    s, docker = story.run.story, story.docker
    out_name = f"openloop-{outside.name}.json"
    entry = StoryTarget(name=outside.name, title=f"{outside.name} ({outside.url}, by URL)")
    entry.outside = _outside_target(outside, extra_delay=s.extra_delay)
    started = time.monotonic()
    timed = _actions(story, outside)
    name = f"playground-url-load-{story.run.run_id}"
    with _incident_made(story, outside) as at:
        check_answers(story, outside)
        argv = docker.loadgen_argv(
            network=outside.network,
            tool_argv=openloop(
                outside.url,
                rate=s.rate,
                duration=s.duration,
                options=[*users(s), *at],
                out=f"/out/{out_name}",
            ),
            name=name,
            out_dir=story.raw_dir,
            image=OPENLOOP_IMAGE,
            cpu_shares=GENERATOR_CPU_SHARES,
        )
        entry.commands = _commands(outside, argv)
        story.info(f"{outside.name}: {s.duration:g} s of load, the incident at {s.before_s:g} s")
        try:
            timed.start()
            proc = docker.run(argv, check=False, timeout=bound(s, s.duration))
        finally:
            timed.finish()
            docker.remove(name)
    entry = replace(
        entry, generator_exit=proc.returncode, generator_stderr=proc.stderr.strip()[-2000:]
    )
    output = read_output(story.raw_dir / out_name, outside.name, proc)
    commands = _incident_commands(outside, timed, t0_wall=output.t0_wall)
    if not output.events and (first := next((c for c in commands if c.when == "start"), None)):
        output = replace(output, events=[{"sent": first.at_s, "command": first.command}])
    entry = measure_incident(entry, output=output, samples=[], access_text="", settings=s)
    entry.outside = replace(entry.outside or OutsideTarget(), commands=commands)
    entry.findings = findings.for_target(entry)
    entry.wall_s = round(time.monotonic() - started, 1)
    story.run.targets.append(entry)
    story.save()
    return entry


def _said(outside: OutsideSettings, when: str) -> str:
    if outside.netem is not None:
        return outside.netem.describe(when)
    return (outside.incident_start if when == "start" else outside.incident_end) or ""


def _commands(outside: OutsideSettings, generator: list[str]) -> list[str]:
    """What a reader types to repeat it: the proxy's start, and the generator."""
    lines = []
    if dep := outside.dependency:
        lines.append(shown(delayproxy.run_argv(dep, network=outside.network, run_id="RUN")))
    return [*lines, shown(generator)]

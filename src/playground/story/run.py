"""Runs the story target by target: up, load and sample, collect, down; never loses a result.

For each target: bring its compose file up, start the server-side sampler, run the open-loop
generator in the load-generator container on the target's network (it sends the incident
to slow_api at its time), read nginx's access log, bring everything down, and decide the
target's findings. The run's results.json is written after every target, so an interrupted
run keeps the targets it finished.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from subprocess import CompletedProcess

from playground.core import remedies
from playground.core.compose import (
    OPENLOOP_IMAGE,
    Docker,
    DockerError,
    scenario_up,
    shown,
)
from playground.core.containerstate import WAIT_TIMEOUT_S
from playground.core.jsonmodel import ModelError
from playground.core.runstore import RunStore
from playground.core.sampling import wait_for
from playground.core.target import Target
from playground.core.tools.abreport import AbTool
from playground.core.tools.abrequests import ab_rows
from playground.core.tools.output import LoadOutputError
from playground.incident import analysis, capacity
from playground.incident.captured import ServerSample
from playground.incident.openloop import GENERATOR_CPU_SHARES
from playground.incident.settings import StorySettings
from playground.incident.steal import CpuTimes, StealSampler, over_run
from playground.incident.storyresults import Settled, StoryRun, StoryTarget
from playground.incident.targetresults import ClosedLoop, HostSteal, Incident, InvalidTry
from playground.story import findings, repeats, reread
from playground.story.closedloop import summarise_ab
from playground.story.plan import STUB_STATUS_PORT, ab_args, incident_url, openloop_args
from playground.story.serverside import (
    ServerAddresses,
    ServerSampler,
    fetch_text,
    parse_access_log,
    parse_calls_log,
    upstream_in_flight,
)

# Beyond the schedule, a run may take every attempt's timeout and refresh, plus start-up.
SLACK_S = 120
# A measurement the generator's self-check marks invalid is measured again, by itself, at
# most this many times in all; every try is kept (raw/ and `invalid_tries`) and counted.
MAX_TRIES = 3


@dataclass
class RunInProgress:
    """The context of a story run in progress: its typed results, the store that keeps them,
    Docker, where its raw output goes and how it reports progress."""

    run: StoryRun
    store: RunStore[StoryRun]
    docker: Docker
    info: Callable[[str], None]
    warn: Callable[[str], None]
    # Called once a measurement is saved (the command's progress bar).
    done: Callable[[str], None] = lambda name: None
    # --wait-timeout: seconds a target may take to become healthy.
    wait_timeout_s: int = WAIT_TIMEOUT_S

    @property
    def raw_dir(self) -> Path:
        return self.store.raw_dir

    def save(self) -> None:
        self.store.save_run(self.run)


def as_run(target: Target, settings: StorySettings) -> Target:
    """The target in the shape the settings give it (the STORY_* variables), a remedy's
    larger pool included."""
    remedy = remedies.remedy_of(target)
    workers, threads = settings.workers, settings.threads
    if remedy is not None:
        workers, threads = remedy.shape(workers, threads)
    per_worker = {
        "threads": threads,
        "gevent": settings.async_cores,
    }.get(target.model, target.per_worker)  # an asyncio server has no pool of its own
    # The title says the shape it runs in ("2 x 64" in the registry, "2 x 8" with --threads 8).
    title = re.sub(r"\b\d+ x \d+\b", f"{workers} x {per_worker}", target.title)
    return replace(target, workers=workers, per_worker=per_worker, title=title)


def _servers(docker: Docker, target: Target) -> ServerAddresses:
    network = docker.network(target.compose_files)

    def cid(service: str) -> str:
        found = docker.container_id(target.compose_files, service)
        if not found:
            raise DockerError(f"{target.name}: no {service} container is running")
        return found

    app, ingress, api = cid("flask_app"), cid("ingress"), cid("slow_api")
    return ServerAddresses(
        app_pid=docker.main_pid(app),
        app_container=app,
        app_ip=docker.ip_address(app, network=network),
        ingress_ip=docker.ip_address(ingress, network=network),
        api_ip=docker.ip_address(api, network=network),
        uwsgi_stats=target.server == "uWSGI",
    )


@contextmanager
def brought_up(story: RunInProgress, target: Target) -> Iterator[ServerAddresses]:
    """The target's files up (whatever was left of them brought down first) and its servers
    found, through the bring-up every kind of run shares (`compose.scenario_up`): down again on
    every way out, a signal's included. A Docker error, in the bring-up or in the work, comes
    out of the block as one DockerError with its whole text (the last log lines included), for
    the measurement to record as its error."""
    docker = story.docker
    docker.down(target.compose_files)
    texts: list[str] = []
    with scenario_up(
        docker,
        target.compose_files,
        failed=lambda line: None,
        warn=texts.append,
        wait_timeout_s=story.wait_timeout_s,
    ) as up:
        if up:
            servers = _servers(docker, target)
            stub = f"http://{servers.ingress_ip}:{STUB_STATUS_PORT}/stub_status"
            if servers.ingress_ip and not wait_for(
                lambda: fetch_text(stub) is not None, timeout=30, step=0.2
            ):
                raise DockerError(f"{target.name}: nginx's stub_status did not answer within 30 s")
            yield servers
    if texts:
        raise DockerError(texts[0])


def settle(servers: ServerAddresses, *, limit: float) -> float | None:
    """Wait until nothing waits on the third party for two looks a second apart (the last
    step's backlog is gone); the seconds it took, None if it was still busy at `limit`."""
    started = time.monotonic()
    quiet = 0
    while time.monotonic() - started < limit:
        quiet = quiet + 1 if upstream_in_flight(servers.api_ip) == 0 else 0
        if quiet >= 2:
            return round(time.monotonic() - started, 1)
        time.sleep(1.0)
    return None


#: Where nginx's access log and slow_api's calls log are, inside their containers.
ACCESS_LOG = ("ingress", "/tmp/access.log")
CALLS_LOG = ("slow_api", "/tmp/calls.log")
TIMING_LOG = ("flask_app", "/tmp/timing.log")


def _server_log(story: RunInProgress, target: Target, log: tuple[str, str], name: str) -> str:
    """A log file from inside one of the target's containers (`log`: its service and path),
    kept in raw/ as `name`; empty where there is none."""
    service, path = log
    text = ""
    if container := story.docker.container_id(target.compose_files, service):
        argv = ["docker", "exec", container, "cat", path]
        text = story.docker.run(argv, check=False, quiet=True, timeout=60).stdout
    (story.raw_dir / name).write_text(text)
    return text


def generator(
    story: RunInProgress,
    target: Target,
    tool_argv: list[str],
    *,
    name: str,
    image: str = OPENLOOP_IMAGE,
) -> list[str]:
    """`docker run` for the story's generator on the target's network, writing into raw/: the
    open-loop generator's image by default (it holds ab too, for the closed loop)."""
    return story.docker.loadgen_argv(
        network=story.docker.network(target.compose_files),
        tool_argv=tool_argv,
        name=name,
        out_dir=story.raw_dir,
        cpu_shares=GENERATOR_CPU_SHARES,
        image=image,
    )


def bound(settings: StorySettings, seconds: float) -> float:
    """How long a generator may run: its arrivals, then every attempt's timeout and reload of
    the last visit, plus start-up."""
    return seconds + settings.max_attempts * (settings.timeout + settings.refresh_delay) + SLACK_S


def read_output(path: Path, what: str, proc: CompletedProcess[str]) -> analysis.GeneratorOutput:
    """The generator's output file, or a DockerError saying why there is none to read."""
    if not path.exists():
        raise DockerError(
            f"{what}: the generator wrote no result (exit {proc.returncode}): "
            f"{proc.stderr.strip()[-500:]}"
        )
    try:
        return analysis.generator_output(json.loads(path.read_text()))
    except (ValueError, ModelError) as exc:
        raise DockerError(f"{what}: {path.name} is not the generator's output: {exc}") from None


def host_steal(samples: Sequence[CpuTimes], output: analysis.GeneratorOutput) -> HostSteal | None:
    """The host's steal over the generator's run, and how many of its late sends (later than
    the self-check's p99 bound) waited through seconds in which the host stole at least as
    much CPU time as they were late."""
    ends = [a.end for a in output.attempts if math.isfinite(a.end)]
    seconds = math.ceil(max(ends, default=0.0)) + 1
    stolen = over_run(samples, t0=output.t0_monotonic, seconds=seconds)
    if stolen is None:
        return None
    late = [a for a in output.attempts if a.sent - a.intended > findings.LATE_SEND_S]

    def with_steal(intended: float, sent: float) -> bool:
        """As much CPU time stolen in the seconds the send waited through as it was late."""
        span = range(max(0, int(intended)), min(seconds, int(sent) + 1))
        return sum(stolen.per_second_s[k] for k in span) >= sent - intended

    return HostSteal(
        steal_s=round(stolen.steal_s, 2),
        share=None if stolen.share is None else round(stolen.share, 4),
        per_second_s=stolen.per_second_s,
        late_sends=len(late),
        late_sends_with_steal=sum(with_steal(a.intended, a.sent) for a in late),
    )


def measure_incident(
    entry: StoryTarget,
    *,
    output: analysis.GeneratorOutput,
    samples: Sequence[ServerSample],
    access_text: str,
    settings: StorySettings,
    calls_text: str = "",
    steal: Sequence[CpuTimes] = (),
    timing_text: str = "",
) -> StoryTarget:
    """The target with its figures: the generator's attempts, the server samples, the host's
    steal and the access log, as per-second rows and a summary, and whether they add up."""
    records = parse_access_log(access_text)
    access = [(r.end_wall - output.t0_wall, r.status) for r in records]
    rows = analysis.per_second(
        output.attempts,
        seconds=int(settings.duration) + 1,
        server=samples,
        t0_monotonic=output.t0_monotonic,
        access=access,
    )
    control = output.events[0] if output.events else None
    incident = Incident(
        start=float(control["sent"]) if control else settings.before_s,
        seconds=settings.incident_s,
        control=control,
    )
    summary = analysis.summarise(
        attempts=output.attempts,
        rows=rows,
        incident=incident,
        arrivals_end=settings.duration,
        timeout=settings.timeout,
        access=records,
        calls=parse_calls_log(calls_text),
    )
    stolen = host_steal(steal, output)
    return replace(
        entry,
        check=output.check,
        loop=output.loop,
        steal=stolen,
        mechanism=reread.from_texts(
            output=output,
            start_s=incident.start,
            texts={"timing": timing_text, "access": access_text, "calls": calls_text},
            rows=rows,
            steal_share=None if stolen is None else stolen.share,
            incident_delay=settings.incident_delay,
            incident_s=incident.seconds,
            per_worker=entry.per_worker,
        ),
        incident=incident,
        adds_up=analysis.check_adds_up(output.attempts, rows),
        summary=summary,
        seconds=rows,
    )


def _stem(target: Target, settings: StorySettings, entry: StoryTarget) -> str:
    """How a measurement's raw files are named: target, delay, repeat, and the try after the
    first."""
    stem = f"{target.name}-{settings.incident_delay:g}s-{entry.repeat}"
    return stem + (f"-try{len(entry.invalid_tries) + 1}" if entry.invalid_tries else "")


def run_incident(
    story: RunInProgress, target: Target, entry: StoryTarget, settings: StorySettings | None = None
) -> StoryTarget:
    """One target through the whole schedule with the open loop (the run's settings, or
    others: the cliff's incident delays)."""
    settings = settings or story.run.story
    docker = story.docker
    stem = _stem(target, settings, entry)
    out_name = f"openloop-{stem}.json"
    argv = generator(
        story,
        target,
        openloop_args(settings, target, out=f"/out/{out_name}"),
        name=f"{target.name}-load",
    )
    entry.commands = [
        shown(docker.compose(target.compose_files, "up", "-d", "--wait")),
        shown(argv),
    ]
    with brought_up(story, target) as servers:
        story.info(
            f"{target.name}: {settings.duration:g} s of load, the incident at "
            f"{settings.before_s:g} s for {settings.incident_s:g} s"
        )
        with ServerSampler(servers) as sampler, StealSampler() as stealing:
            proc = docker.run(argv, check=False, timeout=bound(settings, settings.duration))
        access_text = _server_log(story, target, ACCESS_LOG, f"access-{stem}.log")
        calls_text = _server_log(story, target, CALLS_LOG, f"calls-{stem}.log")
        timing_text = _server_log(story, target, TIMING_LOG, f"timing-{stem}.log")
    entry = replace(
        entry, generator_exit=proc.returncode, generator_stderr=proc.stderr.strip()[-2000:]
    )
    return measure_incident(
        entry,
        output=read_output(story.raw_dir / out_name, target.name, proc),
        samples=sampler.samples,
        access_text=access_text,
        settings=settings,
        calls_text=calls_text,
        steal=stealing.samples,
        timing_text=timing_text,
    )


def run_trusted(story: RunInProgress, target: Target, entry: StoryTarget) -> StoryTarget:
    """The incident, measured again by itself while the generator's self-check marks it
    invalid, at most MAX_TRIES times in all; each invalid try is kept in the one measured."""
    tries: list[InvalidTry] = []
    while True:
        measured = run_incident(story, target, replace(entry, invalid_tries=list(tries)))
        check = measured.check
        if check is None or check.valid or len(tries) + 1 >= MAX_TRIES:
            return measured
        stem = _stem(target, story.run.story, measured)
        tries.append(InvalidTry(check=check, steal=measured.steal, output=f"openloop-{stem}.json"))
        story.warn(
            f"{target.name}: the generator did not keep its schedule ({'; '.join(check.reasons)})"
            f"; measuring it again by itself (try {len(tries) + 1} of at most {MAX_TRIES})"
        )


def _send_incident(url: str, sent: list[float]) -> None:
    """POST the control request; `sent` gets its send time once slow_api took it."""
    started = time.time()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10):
            sent.append(started)
    except OSError:
        pass  # the caller finds `sent` empty and says so


def run_closed_loop(story: RunInProgress, target: Target) -> ClosedLoop:
    """The same incident with ab instead of the open loop: ab runs for the story's duration
    at c connections; the control request goes to slow_api (from this host, at its address
    on the target's network) `before_s` after ab starts."""
    settings, docker = story.run.story, story.docker
    tsv = f"ab-{target.name}.tsv"
    argv = generator(
        story, target, ab_args(settings, target, gnuplot=f"/out/{tsv}"), name=f"{target.name}-ab"
    )
    c = settings.closed_loop_concurrency
    with brought_up(story, target) as servers:
        if not servers.api_ip:
            raise DockerError(f"{target.name}: slow_api has no address on its network")
        story.info(
            f"{target.name}: ab -c {c} for {settings.duration:g} s, the incident at "
            f"{settings.before_s:g} s for {settings.incident_s:g} s"
        )
        sent: list[float] = []
        url = incident_url(settings, host=servers.api_ip)
        control = threading.Timer(settings.before_s, _send_incident, (url, sent))
        control.daemon = True
        control.start()
        proc = docker.run(argv, check=False, timeout=settings.duration + SLACK_S)
        control.join(timeout=15)
        access_text = _server_log(story, target, ACCESS_LOG, f"ab-access-{target.name}.log")
    (story.raw_dir / f"ab-{target.name}.txt").write_text(proc.stdout + proc.stderr)
    if not sent:
        raise DockerError(f"{target.name}: the incident was never sent to slow_api")
    try:
        result = AbTool().parse(stdout=proc.stdout + proc.stderr, per_request=None, concurrency=c)
        rows = ab_rows((story.raw_dir / tsv).read_text())
    except (LoadOutputError, OSError) as exc:
        raise DockerError(
            f"{target.name}: ab gave no report (exit {proc.returncode}): {exc}"
        ) from None
    closed = summarise_ab(
        requests=rows,
        result=result,
        concurrency=c,
        incident_wall=sent[0],
        incident_s=settings.incident_s,
    )
    closed = replace(
        closed,
        nginx_statuses=dict(Counter(str(r.status) for r in parse_access_log(access_text))),
        incident_control=incident_url(settings) + f" at {settings.before_s:g} s",
        commands=[
            shown(docker.compose(target.compose_files, "up", "-d", "--wait")),
            shown(argv),
            f"curl -X POST '{incident_url(settings)}'  "
            f"# {closed.incident_at_s:.1f} s after ab's start",
        ],
    )
    b, d, a = (closed.phase(n).per_s or 0 for n in ("before", "during", "after"))
    story.info(
        f"{target.name} (ab): {b:.0f} → {d:.0f} → {a:.0f} requests/s, {closed.failed} failed, "
        f"max {closed.latency_max_s or 0:.1f} s"
    )
    return closed


#: Bringing a story target up and down, and the generator's start: measured at 15-25 s here.
BRING_UP_S = 25


def expected_seconds(
    settings: StorySettings, *, targets: int, closed_loop: bool, incident: bool = True
) -> float:
    """About how long the incident takes for `targets` measurements (printed before a run
    starts): each its schedule and the last users' attempts, plus a bring-up."""
    one = settings.duration + settings.timeout + BRING_UP_S
    per_target = (one if incident else 0) + (settings.duration + BRING_UP_S if closed_loop else 0)
    return targets * per_target


def _headline(t: StoryTarget) -> str:
    s = t.summary
    if s is None:
        return f"{t.name}: {t.error or 'not measured'}"
    verdicts = "; ".join(f.message for f in t.findings)
    return (
        f"{t.name}: goodput {s.goodput_before or 0:.0f}/s before, {s.goodput_during or 0:.0f}/s "
        f"during, {s.goodput_after or 0:.0f}/s after; {s.amplification or 0:.2f} attempts per "
        f"visit; {verdicts}"
    )


def run_story(
    story: RunInProgress,
    targets: Sequence[Target],
    *,
    incident: bool = True,
    closed_loop: bool = False,
) -> None:
    """Target by target: the incident with the open loop and/or the same incident with ab
    (the closed loop); results.json after each target. With `repeat` above 1 every target
    is measured again, round after round (each on a fresh bring-up: the machine's drift
    falls on every target alike), and the spreads are brought up to date after each."""
    rounds = story.run.repeat if incident or closed_loop else 0
    for repeat in range(1, rounds + 1):
        for base in targets:
            if any(s.name == base.name for s in story.run.settled or []):
                continue
            _measure(story, as_run(base, story.run.story), repeat, incident, closed_loop)
            if story.run.settle is not None and repeat < rounds:
                _settle(story, base.name, repeat)
        if story.run.repeat > 1:
            story.run.spreads = repeats.spreads(story.run.targets, after_s=story.run.story.after_s)
            story.save()


def _settle(story: RunInProgress, name: str, repeat: int) -> None:
    """Stops a target's repeats once its verdict is settled (`--settle`), and says so."""
    minimum = story.run.settle or 0
    measured = [t for t in story.run.targets if t.name == name]
    collapsed = repeats.settled(measured, minimum=minimum)
    if collapsed is None:
        return
    story.run.settled = [
        *(story.run.settled or []),
        Settled(name, repeat, collapsed.k, collapsed.n),
    ]
    story.save()
    way = "above" if collapsed.interval[0] > 0.5 else "below"
    story.info(
        f"{name}: collapsed in {collapsed.text()} trusted repeats, wholly {way} a half after "
        f"{repeat} of at most {story.run.repeat}: its repeats stop here (--settle {minimum})"
    )


def _measure(
    story: RunInProgress, target: Target, repeat: int, incident: bool, closed_loop: bool
) -> None:
    """One measurement of one target, its findings decided, saved at once."""
    started = time.monotonic()
    if story.run.repeat > 1:
        story.info(f"{target.name}: repeat {repeat} of {story.run.repeat}")
    entry = replace(
        StoryTarget.about(target, repeat),
        prediction=(
            capacity.of(target, story.run.story, upstream_s=story.run.story.incident_delay)
            if target.model == "threads"
            else None
        ),
    )
    if incident:
        try:
            entry = run_trusted(story, target, entry)
        except DockerError as exc:
            story.warn(f"{target.name}: {exc}")
            entry.error = str(exc)
    if closed_loop:
        try:
            entry.closed_loop = run_closed_loop(story, target)
        except DockerError as exc:
            story.warn(f"{target.name} (ab): {exc}")
            entry.closed_loop_error = str(exc)
    entry.findings = findings.for_target(entry)
    entry.wall_s = round(time.monotonic() - started, 1)
    story.run.targets.append(entry)
    story.save()
    story.done(entry.name)
    if entry.summary is not None:
        story.info(_headline(entry))

"""Fault injection: what each serving mode does when things go wrong, measured over time.

Four faults, each driven against a scenario that is up and under load:

* ``upstream-slowdown`` -- the requested delay goes from 1 s to 5 s and back: does latency
  simply follow the upstream, or do requests queue behind busy workers?
* ``upstream-outage`` -- ``docker compose stop slow_api`` under load, then ``start`` it again:
  the app must answer 502/504 promptly (within its upstream timeout), never hang a worker, and
  serve normally again within seconds of slow_api's return, without a restart.
* ``db-outage`` -- the same with ``postgres`` in the bonus scenario: 503 while it is down.
* ``overload`` -- ApacheBench at c=2000 from inside the scenario's network, far above what any
  mode holds in flight: no process may crash and no container restart; where the load is shed
  (refused connections, resets, or queueing) is reported.

ab's report has no time axis, so the outages and the slowdown are watched by a small
closed-loop *prober* instead: C clients, each sending its next request as soon as the previous
one answered, every request recorded with its start, end and outcome (an HTTP status, or
``refused``, ``reset``, ``closed`` -- the connection closed without an answer -- or
``timeout``). One rule keeps an outage from turning the prober into a retry storm: a client
whose request failed waits out the rest of the nominal delay before its next one, so the
request rate stays what it was (C / delay).

Before and after every fault a *burst* of concurrent requests (the scenario's own tutorial
concurrency) is timed: if the burst after recovery takes clearly longer than the one before,
workers are stuck (threads still blocked on a dead connection, say).

Everything a fault does is a command a reader can type (printed as it runs, and kept in
``faults.json``); the README's "Faults" section shows them by hand.
"""

from __future__ import annotations

import asyncio
import errno
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from playground import load as loadmod
from playground.compose import WAIT_TIMEOUT_S, Docker, DockerError, shown
from playground.results import write_json_atomic
from playground.scenarios import Target, plain_decimal

SCHEMA_VERSION = 1
FAULTS = ("upstream-slowdown", "upstream-outage", "db-outage", "overload")
# The service each outage stops; the faults without one act on the load instead.
STOPPED_SERVICE = {"upstream-outage": "slow_api", "db-outage": "postgres"}
# The apps' upstream timeout is the delay plus this grace (UPSTREAM_GRACE in the apps).
UPSTREAM_GRACE_S = 5.0
# Answers the apps document for an upstream or database that is down.
DOCUMENTED_ERRORS = {502, 503, 504}
# A burst after recovery may take this much longer than the one before (x, then + s).
STUCK_FACTOR, STUCK_SLACK_S = 1.5, 2.0
OVERLOAD_PROBE_CONCURRENCY = 10


# --- one request ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """One probe request: when it started and ended (seconds on the session's clock), the
    delay it asked for, and its HTTP status or, without an answer, why not."""

    start: float
    end: float
    delay: float
    status: int | None = None
    error: str | None = None  # refused, reset, closed, timeout, garbled, or an errno name

    @property
    def kind(self) -> str:
        return str(self.status) if self.status is not None else str(self.error)

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def seconds(self) -> float:
        return self.end - self.start


def classify(exc: BaseException) -> str:
    """A short, stable name for why a request got no answer."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return "reset"
    if isinstance(exc, asyncio.IncompleteReadError | EOFError):
        return "closed"
    if isinstance(exc, OSError) and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno].lower()
    return type(exc).__name__


async def request_once(*, host: str, port: int, delay: float,
                       timeout_s: float) -> tuple[int | None, str | None]:
    """GET /?delay=D on a fresh connection: (status, None) or (None, why there was no answer)."""
    writer = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET /?delay={plain_decimal(delay)} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                         "Connection: close\r\n\r\n".encode())
            await writer.drain()
            line = await reader.readline()
            if not line:
                return None, "closed"
            parts = line.split()
            if len(parts) < 2 or not parts[1].isdigit():
                return None, "garbled"
            try:
                await reader.read()  # the rest of the answer, up to the server's close
            except OSError:
                pass  # the status line is the answer; a reset after it changes nothing
            return int(parts[1]), None
    except Exception as exc:  # noqa: BLE001 -- every failure is an outcome to record
        return None, classify(exc)
    finally:
        if writer is not None:
            writer.close()


# --- the prober -------------------------------------------------------------------------------
class Prober:
    """C clients in a closed loop against host:port, on a background thread, until stopped.

    ``delay`` can be changed while it runs (the slowdown fault). Every request is recorded as
    an :class:`Outcome` on the clock ``clock`` (seconds since the session started).
    """

    def __init__(self, *, host: str, port: int, concurrency: int, delay: float,
                 timeout_s: float, clock: Callable[[], float],
                 max_requests: int = 500_000) -> None:
        self.host, self.port = host, port
        self.concurrency = concurrency
        self.delay = delay
        self.timeout_s = timeout_s
        self.clock = clock
        self.max_requests = max_requests
        self.outcomes: list[Outcome] = []
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task] = []
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"prober-{port}", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._tasks = [asyncio.create_task(self._client()) for _ in range(self.concurrency)]
        self._started.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _client(self) -> None:
        while not self._stopping and len(self.outcomes) < self.max_requests:
            delay = self.delay
            start = self.clock()
            status, error = await request_once(host=self.host, port=self.port, delay=delay,
                                               timeout_s=self.timeout_s)
            outcome = Outcome(start=start, end=self.clock(), delay=delay, status=status,
                              error=error)
            self.outcomes.append(outcome)
            if not outcome.ok and not self._stopping:
                # Pace failures to the nominal delay: an outage is not a retry storm.
                await asyncio.sleep(max(0.0, delay - outcome.seconds, 0.05))

    def __enter__(self) -> Prober:
        self._thread.start()
        self._started.wait(10)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop(cancel=exc_type is not None)

    def stop(self, *, cancel: bool = False) -> list[Outcome]:
        """Stop sending; let the requests in flight finish (or cancel them); the outcomes."""
        self._stopping = True
        if cancel and self._loop is not None:
            for task in self._tasks:
                self._loop.call_soon_threadsafe(task.cancel)
        self._thread.join(timeout=self.timeout_s + 10)
        return sorted(self.outcomes, key=lambda o: o.start)


@dataclass(frozen=True)
class Burst:
    """k requests sent at once: their statuses/errors and how long the slowest took."""

    k: int
    delay: float
    kinds: dict[str, int]
    seconds: float

    @property
    def ok(self) -> bool:
        return self.kinds == {"200": self.k}


def timed_request(*, host: str, port: int, delay: float, timeout_s: float) -> tuple[float, str]:
    """One request: (seconds it took, its status or why there was no answer)."""
    started = time.monotonic()
    status, error = asyncio.run(request_once(host=host, port=port, delay=delay,
                                             timeout_s=timeout_s))
    return time.monotonic() - started, str(status) if status is not None else str(error)


def burst(*, host: str, port: int, k: int, delay: float, timeout_s: float) -> Burst:
    async def main() -> tuple[float, list[tuple[int | None, str | None]]]:
        started = time.monotonic()
        answers = await asyncio.gather(*(
            request_once(host=host, port=port, delay=delay, timeout_s=timeout_s)
            for _ in range(k)))
        return time.monotonic() - started, answers

    seconds, answers = asyncio.run(main())
    kinds = Counter(str(s) if s is not None else str(e) for s, e in answers)
    return Burst(k=k, delay=delay, kinds=dict(sorted(kinds.items())), seconds=round(seconds, 3))


# --- reading the outcomes ---------------------------------------------------------------------
def count_kinds(outcomes: Iterable[Outcome]) -> dict[str, int]:
    return dict(sorted(Counter(o.kind for o in outcomes).items()))


def timeline(outcomes: Sequence[Outcome], *, bin_s: float = 1.0) -> list[dict]:
    """Answers by kind per second (by the time they arrived): the fault as it happened."""
    bins: dict[int, Counter] = {}
    for o in outcomes:
        bins.setdefault(int(o.end // bin_s), Counter())[o.kind] += 1
    return [{"t": round(i * bin_s, 3), **dict(sorted(c.items()))} for i, c in sorted(bins.items())]


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def phase_stats(outcomes: Sequence[Outcome], *, start: float, end: float) -> dict:
    """Requests that started in [start, end): answers by kind, latency, queueing, throughput.

    ``excess`` is each request's time beyond the delay it asked for: time spent queueing (or
    failing fast, which makes it negative for an error)."""
    inside = [o for o in outcomes if start <= o.start < end]
    ok = [o for o in inside if o.ok]
    secs = [o.seconds for o in ok]
    excess = [o.seconds - o.delay for o in ok]
    span = max(end - start, 1e-9)
    done_in = [o for o in outcomes if o.ok and start <= o.end < end]
    r = lambda v: None if v is None else round(v, 3)  # noqa: E731
    return {
        "from_s": round(start, 3), "to_s": round(end, 3), "requests": len(inside),
        "kinds": count_kinds(inside),
        "p50_s": r(_pct(secs, 0.5)), "p90_s": r(_pct(secs, 0.9)),
        "max_s": r(max(secs, default=None)),
        "excess_p50_s": r(_pct(excess, 0.5)), "excess_max_s": r(max(excess, default=None)),
        "ok_rps": round(len(done_in) / span, 2),
        "longest_s": r(max((o.seconds for o in inside), default=None)),
    }


def longest_overlapping(outcomes: Sequence[Outcome], *, start: float, end: float) -> float | None:
    """The longest request that was in flight at any moment of [start, end]."""
    times = [o.seconds for o in outcomes if o.start <= end and o.end >= start]
    return round(max(times), 3) if times else None


def time_to_recover(outcomes: Sequence[Outcome], *, back_at: float) -> float | None:
    """Seconds from ``back_at`` (the upstream is back) until every request started from then on
    succeeded: 0 if none failed after ``back_at``, None if the last ones still failed."""
    after = sorted((o for o in outcomes if o.start >= back_at), key=lambda o: o.start)
    failed = [i for i, o in enumerate(after) if not o.ok]
    if not failed:
        return 0.0
    rest = after[failed[-1] + 1:]
    if not rest:
        return None
    return round(rest[0].start - back_at, 3)


def settle_time(outcomes: Sequence[Outcome], *, since: float, limit_s: float) -> float | None:
    """Seconds from ``since`` until every request started from then on was answered 200
    within ``limit_s``: when latency was back to normal. None if it never was."""
    after = sorted((o for o in outcomes if o.start >= since), key=lambda o: o.start)
    slow = [i for i, o in enumerate(after) if not o.ok or o.seconds > limit_s]
    if not slow:
        return 0.0
    rest = after[slow[-1] + 1:]
    return round(rest[0].start - since, 3) if rest else None


def stuck_verdict(*, before: Burst, after: Burst) -> tuple[bool, str]:
    """Workers are stuck if the burst after the fault fails or takes clearly longer."""
    allowed = before.seconds * STUCK_FACTOR + STUCK_SLACK_S
    if not after.ok:
        return True, f"burst of {after.k} after the fault answered {after.kinds}"
    if after.seconds > allowed:
        return True, (f"burst of {after.k} took {after.seconds:.2f} s after the fault against "
                      f"{before.seconds:.2f} s before (allowed {allowed:.2f} s): capacity lost")
    return False, (f"burst of {after.k} x {after.delay:g} s: {before.seconds:.2f} s before, "
                   f"{after.seconds:.2f} s after")


@dataclass(frozen=True)
class ServerState:
    """What `docker inspect` and `docker top` say about one app container."""

    service: str
    container: str | None
    status: str | None
    started_at: str | None
    restarts: int
    oom_killed: bool
    processes: tuple[tuple[int, str], ...]  # the server's own process tree: (pid, command)


def server_state(*, docker: Docker, compose_file: str | tuple[str, ...],
                 service: str) -> ServerState:
    cid = docker.container_id(compose_file, service)
    if not cid:
        return ServerState(service, None, None, None, 0, False, ())
    state = docker.state(cid)
    root = state.get("Pid") or 0
    rows = docker.processes(cid)
    parents = {pid: ppid for pid, ppid, _ in rows}
    tree = []
    for pid, _, cmd in rows:
        cur, seen = pid, set()
        while cur and cur != root and cur not in seen:
            seen.add(cur)
            cur = parents.get(cur, 0)
        if cur == root and root:
            tree.append((pid, cmd[:120]))
    return ServerState(service=service, container=cid, status=state.get("Status"),
                       started_at=state.get("StartedAt"), restarts=state.get("RestartCount", 0),
                       oom_killed=bool(state.get("OOMKilled")), processes=tuple(sorted(tree)))


def compare_states(*, before: ServerState, after: ServerState) -> dict:
    """Did the container restart, stop, or lose a server process (a crashed worker)?"""
    lost = sorted(set(before.processes) - set(after.processes))
    restarted = (after.container != before.container or after.started_at != before.started_at
                 or after.restarts > before.restarts)
    problems = []
    if after.status != "running":
        problems.append(f"{after.service} is {after.status or 'gone'}")
    if restarted:
        problems.append(f"{after.service} restarted")
    if after.oom_killed:
        problems.append(f"{after.service} was killed for lack of memory")
    if lost:
        problems.append(f"{after.service} lost {len(lost)} server process(es): "
                        + ", ".join(f"{pid} {cmd}" for pid, cmd in lost[:4]))
    return {"service": after.service, "status": after.status, "restarts": after.restarts,
            "restarted": restarted, "processes_before": len(before.processes),
            "processes_after": len(after.processes), "lost_processes": [list(p) for p in lost],
            "problems": problems}


# --- settings and sessions ----------------------------------------------------------------------
@dataclass(frozen=True)
class FaultSettings:
    concurrency: int | None = None  # probe clients per target; None: the target's own c
    delay: float = 1.0
    slow_delay: float = 5.0  # upstream-slowdown: the delay while the upstream is slow
    baseline_s: float = 5.0  # normal load before the fault
    fault_s: float = 10.0  # how long the fault lasts
    recovery_s: float = 15.0  # normal load after it
    probe_timeout_s: float = 60.0  # a request with no answer by then counts as hung
    overload_concurrency: int = 2000
    overload_s: float = 30.0  # ab's time limit (-t) under overload
    drain_limit_s: float = 240.0  # after an overload, how long a fresh request may wait
    wait_timeout_s: int = WAIT_TIMEOUT_S

    def clients(self, target: Target) -> int:
        return self.concurrency or target.concurrency


def applies(fault: str, target: Target) -> bool:
    """db-outage needs a database; every other fault applies to every scenario."""
    return fault != "db-outage" or "psycopg2" in target.compose_file


@dataclass
class Session:
    """One compose file, up, with a clock shared by its probers and its marks."""

    docker: Docker
    compose_file: tuple[str, ...]  # the scenario's file and any overrides (-f ... -f ...)
    targets: tuple[Target, ...]
    settings: FaultSettings
    echo: Callable[[str], None] = lambda line: None
    t0: float = field(default_factory=time.monotonic)
    marks: list[dict] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def mark(self, label: str) -> float:
        t = self.now()
        self.marks.append({"t": round(t, 3), "label": label})
        return t

    def record(self, *args: str) -> None:
        """Keep `docker compose -f FILE ARGS` among the commands a reader can repeat."""
        self.commands.append(shown(self.docker.compose(self.compose_file, *args)))

    def record_load(self, *, concurrency: Callable[[Target], int], delay: float) -> None:
        """What the prober does, as a reader would do it from the host."""
        for t in self.targets:
            self.commands.append(f"ab -r -t 60 -n 100000 -c {concurrency(t)} -s 60 "
                                 f"'{t.host_url(delay=delay)}' &")

    def services(self) -> list[str]:
        return self.docker.services(self.compose_file)

    def states(self, *, skip: str | None = None) -> dict[str, ServerState]:
        return {s: server_state(docker=self.docker, compose_file=self.compose_file, service=s)
                for s in self.services() if s != skip}

    def probers(self, *, delay: float, concurrency: Callable[[Target], int]) -> list[Prober]:
        return [Prober(host="127.0.0.1", port=t.host_port, concurrency=concurrency(t),
                       delay=delay, timeout_s=self.settings.probe_timeout_s, clock=self.now)
                for t in self.targets]

    def burst(self, target: Target) -> Burst:
        return burst(host="127.0.0.1", port=target.host_port, k=target.concurrency,
                     delay=self.settings.delay, timeout_s=self.settings.probe_timeout_s)


@contextmanager
def _running(probers: Sequence[Prober]) -> Iterator[None]:
    started: list[Prober] = []
    try:
        for p in probers:
            started.append(p.__enter__())
        yield
    except BaseException:
        for p in started:
            p.stop(cancel=True)
        raise


def _sleep_until(session: Session, t: float) -> None:
    remaining = t - session.now()
    if remaining > 0:
        time.sleep(remaining)


def container_checks(*, before: dict[str, ServerState],
                     after: dict[str, ServerState]) -> dict:
    return {s: compare_states(before=before[s], after=after[s]) for s in before if s in after}


def _target_base(target: Target, *, clients: int, delay: float) -> dict:
    return {"name": target.name, "title": target.title, "service": target.service,
            "url": target.host_url(delay=delay), "concurrency": clients, "delay": delay}


def run_outage(*, session: Session, fault: str) -> dict:
    """Stop the upstream (or the database) under load, start it again, and watch."""
    s, service = session.settings, STOPPED_SERVICE[fault]
    bursts_before = {t.name: session.burst(t) for t in session.targets}
    states_before = session.states(skip=service)
    probers = session.probers(delay=s.delay, concurrency=s.clients)
    session.record_load(concurrency=s.clients, delay=s.delay)
    session.record("stop", service)
    session.commands += [f"curl -s -o /dev/null -w '%{{http_code}} %{{time_total}} s\\n' "
                         f"'{t.host_url(delay=s.delay)}'   # while it is down"
                         for t in session.targets]
    session.record("start", service)
    with _running(probers):
        start = session.mark("probe started")
        _sleep_until(session, start + s.baseline_s)
        stop_at = session.mark(f"stop {service}")
        session.docker.stop_service(session.compose_file, service)
        down_at = session.mark(f"{service} stopped")
        _sleep_until(session, down_at + s.fault_s)
        session.mark(f"start {service}")
        session.docker.start_service(session.compose_file, service)
        back_at = session.mark(f"{service} started")
        _sleep_until(session, back_at + s.recovery_s)
        end = session.mark("probe stopping")
        results = [p.stop() for p in probers]
    session.mark("probe stopped")
    bursts_after = {t.name: session.burst(t) for t in session.targets}
    containers = container_checks(before=states_before, after=session.states(skip=service))
    out = []
    for target, prober, outcomes in zip(session.targets, probers, results, strict=True):
        bound = s.delay + UPSTREAM_GRACE_S
        longest = longest_overlapping(outcomes, start=stop_at, end=back_at)
        recover = time_to_recover(outcomes, back_at=back_at)
        stuck, stuck_reason = stuck_verdict(before=bursts_before[target.name],
                                            after=bursts_after[target.name])
        kinds = count_kinds(outcomes)
        # While down: from the moment `stop` returned (until then slow_api may still finish
        # the requests it had) to the moment `start` returned.
        during = phase_stats(outcomes, start=down_at, end=back_at)
        problems = _unexpected_answers(kinds)
        timeouts = kinds.get("timeout", 0)
        if timeouts:
            problems.append(f"{timeouts} requests got no answer within {s.probe_timeout_s:g} s")
        if longest is not None and longest > bound + 1:
            problems.append(f"an answer took {longest:.2f} s while {service} was down "
                            f"(its upstream timeout is {bound:g} s)")
        if recover is None:
            problems.append(f"still failing {s.recovery_s:g} s after {service} came back")
        if stuck:
            problems.append(stuck_reason)
        problems += [p for c in containers.values() for p in c["problems"]]
        notes = []
        if not any(k != "200" for k in during["kinds"]):
            notes.append(f"no request failed while {service} was down")
        out.append({
            **_target_base(target, clients=prober.concurrency, delay=s.delay),
            "requests": len(outcomes), "kinds": kinds,
            "phases": {"before": phase_stats(outcomes, start=start, end=stop_at),
                       "stopping": phase_stats(outcomes, start=stop_at, end=down_at),
                       "during": during,
                       "after": phase_stats(outcomes, start=back_at, end=end)},
            "longest_while_down_s": longest, "answer_bound_s": bound,
            "recover_s": recover,
            "burst_before": asdict(bursts_before[target.name]),
            "burst_after": asdict(bursts_after[target.name]),
            "stuck": stuck, "stuck_reason": stuck_reason,
            "timeline": timeline(outcomes), "problems": problems, "notes": notes,
        })
    return {"fault": fault, "stopped_service": service, "containers": containers, "targets": out}


def run_slowdown(*, session: Session) -> dict:
    """Raise the requested delay mid-run (1 s -> 5 s) and lower it again."""
    s = session.settings
    bursts_before = {t.name: session.burst(t) for t in session.targets}
    states_before = session.states()
    probers = session.probers(delay=s.delay, concurrency=s.clients)
    session.record_load(concurrency=s.clients, delay=s.delay)
    session.commands.append(f"# after {s.baseline_s:g} s, the same load at ?delay={s.slow_delay:g}"
                            f" for {s.fault_s:g} s, then at ?delay={s.delay:g} again")
    with _running(probers):
        start = session.mark(f"probe started at delay={s.delay:g}")
        _sleep_until(session, start + s.baseline_s)
        slow_at = session.mark(f"delay {s.delay:g} -> {s.slow_delay:g}")
        for p in probers:
            p.delay = s.slow_delay
        _sleep_until(session, slow_at + s.fault_s)
        back_at = session.mark(f"delay {s.slow_delay:g} -> {s.delay:g}")
        for p in probers:
            p.delay = s.delay
        _sleep_until(session, back_at + s.recovery_s)
        end = session.mark("probe stopping")
        results = [p.stop() for p in probers]
    session.mark("probe stopped")
    bursts_after = {t.name: session.burst(t) for t in session.targets}
    containers = container_checks(before=states_before, after=session.states())
    out = []
    for target, prober, outcomes in zip(session.targets, probers, results, strict=True):
        before = phase_stats(outcomes, start=start, end=slow_at)
        slow = phase_stats(outcomes, start=slow_at, end=back_at)
        after = phase_stats(outcomes, start=back_at, end=end)
        limit = max((before["p90_s"] or s.delay) * 1.5, s.delay + 0.5)
        settle = settle_time(outcomes, since=back_at, limit_s=limit)
        stuck, stuck_reason = stuck_verdict(before=bursts_before[target.name],
                                            after=bursts_after[target.name])
        kinds = count_kinds(outcomes)
        problems = [f"{n} x {k}" for k, n in kinds.items() if k != "200"]
        if settle is None:
            problems.append(f"latency not back under {limit:.2f} s {s.recovery_s:g} s after "
                            "the upstream sped up again")
        if stuck:
            problems.append(stuck_reason)
        problems += [p for c in containers.values() for p in c["problems"]]
        notes = []
        if slow["excess_p50_s"] is not None and slow["excess_p50_s"] > 0.5:
            notes.append(f"requests queued while the upstream was slow: the median waited "
                         f"{slow['excess_p50_s']:.2f} s beyond its {s.slow_delay:g} s delay")
        elif slow["p50_s"] is not None:
            notes.append(f"latency followed the upstream ({slow['p50_s']:.2f} s median at "
                         f"{s.slow_delay:g} s delay), no queueing")
        out.append({
            **_target_base(target, clients=prober.concurrency, delay=s.delay),
            "slow_delay": s.slow_delay, "requests": len(outcomes), "kinds": kinds,
            "phases": {"before": before, "slow": slow, "after": after},
            "settle_s": settle, "settle_limit_s": round(limit, 3),
            "burst_before": asdict(bursts_before[target.name]),
            "burst_after": asdict(bursts_after[target.name]),
            "stuck": stuck, "stuck_reason": stuck_reason,
            "timeline": timeline(outcomes), "problems": problems, "notes": notes,
        })
    return {"fault": "upstream-slowdown", "stopped_service": None, "containers": containers,
            "targets": out}


def overload_command(*, target: Target, settings: FaultSettings) -> list[str]:
    c = settings.overload_concurrency
    # -t bounds the run whatever the mode manages; -n after it keeps ab from stopping at 50000.
    return ["ab", "-r", "-t", f"{math.ceil(settings.overload_s)}", "-n", str(3 * c), "-c", str(c),
            "-s", "30", target.url(delay=settings.delay)]


def run_overload(*, session: Session, run_id: str, raw_dir: Path | None) -> dict:
    """ab at c=2000 from inside the network, one target at a time, with a few regular
    clients probing from the host meanwhile: what they see, and what the server shed."""
    s = session.settings
    network = f"{session.docker.project(session.compose_file)}_default"
    out, all_containers = [], {}
    for target in session.targets:
        before_burst = session.burst(target)
        states_before = session.states()
        argv = overload_command(target=target, settings=s)
        name = f"flask-playground-overload-{run_id}-{target.name}"
        session.commands.append(shown(session.docker.loadgen_argv(network=network, tool_argv=argv)))
        session.docker.remove(name)
        prober = Prober(host="127.0.0.1", port=target.host_port,
                        concurrency=OVERLOAD_PROBE_CONCURRENCY, delay=s.delay,
                        timeout_s=s.probe_timeout_s, clock=session.now)
        try:
            session.docker.run(session.docker.loadgen_argv(network=network, tool_argv=argv,
                                                           name=name, detach=True))
            start = session.mark(f"ab -c {s.overload_concurrency} against {target.name}")
            with _running([prober]):
                exit_code = session.docker.wait_container(name, timeout=s.overload_s + 120)
                end = session.mark(f"ab finished ({target.name})")
                outcomes = prober.stop()
            stdout, stderr = session.docker.container_logs(name)
        finally:
            session.docker.remove(name)
        if raw_dir is not None:
            raw_dir.mkdir(parents=True, exist_ok=True)
            (raw_dir / f"overload-{target.name}.txt").write_text(stdout + "\n" + stderr)
        # A server may still be working through requests whose clients have gone (a queue
        # never forgets): one fresh request shows how long until it answers normally again.
        drain_s, drain_answer = timed_request(host="127.0.0.1", port=target.host_port,
                                              delay=s.delay, timeout_s=s.drain_limit_s)
        session.mark(f"a fresh request answered {drain_answer} after {drain_s:.1f} s")
        after_burst = session.burst(target)
        containers = container_checks(before=states_before, after=session.states())
        all_containers.update(containers)
        try:
            ab = loadmod.TOOLS["ab"].parse(stdout=stdout + "\n" + stderr, per_request=None,
                                           concurrency=s.overload_concurrency)
            ab_figures = {"complete": ab.complete, "failed": ab.failed, "failures": ab.failures,
                          "non_2xx": ab.non_2xx, "rps": ab.rps, "time_taken_s": ab.time_taken_s,
                          "latency_ms": ab.latency_ms, "connect_max_ms": ab.connect_max_ms,
                          "exit_code": exit_code, "error": None}
        except loadmod.LoadOutputError as exc:
            ab, ab_figures = None, {"exit_code": exit_code, "error": str(exc)}
        stuck, stuck_reason = stuck_verdict(before=before_burst, after=after_burst)
        probe = phase_stats(outcomes, start=start, end=end)
        problems = _unexpected_answers(probe["kinds"], allowed={200, 502, 503, 504})
        if drain_answer != "200":
            stuck = True
            stuck_reason = (f"a fresh request after the overload got {drain_answer} after "
                            f"{drain_s:.1f} s")
        if stuck:
            problems.append(stuck_reason)
        notes = []
        if drain_s > s.delay * 3 + 2:
            notes.append(f"after the overload a fresh request waited {drain_s:.1f} s: the server "
                         "first worked through the queued requests of clients that had gone")
        problems += [p for c in containers.values() for p in c["problems"]]
        out.append({
            **_target_base(target, clients=s.overload_concurrency, delay=s.delay),
            "ab": ab_figures, "probe": probe, "probe_concurrency": OVERLOAD_PROBE_CONCURRENCY,
            "shed": shed_summary(ab=ab, ab_error=ab_figures.get("error"), probe=probe,
                                 delay=s.delay, concurrency=s.overload_concurrency),
            "drain_s": round(drain_s, 3), "drain_answer": drain_answer,
            "burst_before": asdict(before_burst), "burst_after": asdict(after_burst),
            "stuck": stuck, "stuck_reason": stuck_reason, "containers": containers,
            "timeline": timeline(outcomes), "problems": problems, "notes": notes,
        })
    return {"fault": "overload", "stopped_service": None, "containers": all_containers,
            "targets": out}


def shed_summary(*, ab: loadmod.LoadResult | None, ab_error: str | None, probe: dict,
                 delay: float, concurrency: int) -> list[str]:
    """Where the server shed the load, in words: refused, reset, queued, or answered errors."""
    said = []
    if ab is None:
        said.append(f"ab printed no report: {ab_error}")
    else:
        f = ab.failures
        if f.get("connect"):
            said.append(f"{f['connect']} connections refused or not accepted in time")
        if f.get("receive"):
            said.append(f"{f['receive']} connections reset or closed without an answer")
        if f.get("exceptions"):
            said.append(f"{f['exceptions']} socket exceptions")
        if ab.non_2xx:
            said.append(f"{ab.non_2xx} error answers (non-2xx)")
        if ab.connect_max_ms is not None and ab.connect_max_ms >= 900:
            said.append(f"listen queue overflowed: a connect took {ab.connect_max_ms / 1000:.1f} s "
                        "(SYN retransmits)")
        p50 = ab.latency_ms.get("p50")
        p99 = ab.latency_ms.get("p99")
        if p50 is not None and p50 > 2 * delay * 1000:
            said.append(f"queueing: median {p50 / 1000:.1f} s, p99 {p99 / 1000:.1f} s for a "
                        f"{delay:g} s upstream")
        elif p99 is not None and p99 > 3 * delay * 1000:
            said.append(f"some requests queued: p99 {p99 / 1000:.1f} s for a {delay:g} s upstream")
        if not said:
            said.append(f"nothing shed: all {ab.complete} answered at about the delay "
                        f"(median {(p50 or 0) / 1000:.2f} s)")
    kinds = {k: n for k, n in probe["kinds"].items() if k != "200"}
    if kinds:
        said.append(f"regular clients meanwhile got {kinds}")
    if probe["p50_s"] is not None and probe["p50_s"] > 2 * delay:
        said.append(f"regular clients waited {probe['p50_s']:.1f} s (median) for a "
                    f"{delay:g} s request")
    return said


def _unexpected_answers(kinds: dict[str, int], *,
                        allowed: set[int] = {200} | DOCUMENTED_ERRORS) -> list[str]:
    """Answers outside what the apps document (a 500 above all) are problems."""
    out = []
    for kind, n in kinds.items():
        if kind.isdigit() and int(kind) not in allowed:
            out.append(f"{n} x HTTP {kind} (undocumented answer)")
    return out


# --- the whole run ------------------------------------------------------------------------------
@dataclass
class FaultStore:
    """faults.json, rewritten atomically after every finished fault."""

    run_dir: Path
    data: dict

    @property
    def path(self) -> Path:
        return self.run_dir / "faults.json"

    @classmethod
    def create(cls, *, results_dir: Path, run_id: str, header: dict) -> FaultStore:
        run_dir = results_dir / run_id
        run_dir.mkdir(parents=True, exist_ok=False)
        store = cls(run_dir, {"schema_version": SCHEMA_VERSION, "run_id": run_id, **header,
                              "finished_at": None, "runs": []})
        store.save()
        return store

    def add(self, run: dict) -> None:
        self.data["runs"].append(run)
        self.save()

    def save(self) -> None:
        write_json_atomic(self.path, self.data)


def run_faults(*, docker: Docker, targets: Sequence[Target], faults: Sequence[str],
               settings: FaultSettings, store: FaultStore,
               info: Callable[[str], None] = lambda line: None,
               warn: Callable[[str], None] = lambda line: None) -> None:
    """For each compose file: up once, every fault that applies in turn, down."""
    by_file: dict[tuple[str, ...], list[Target]] = {}
    for t in targets:
        if t.host_port is None:
            raise ValueError(f"{t.name} has no published port to probe")
        by_file.setdefault(t.compose_files, []).append(t)
    for compose_file, group in by_file.items():
        todo = [f for f in faults if any(applies(f, t) for t in group)]
        if not todo:
            continue
        info(f"[bold]{' + '.join(compose_file)}[/bold]: {', '.join(todo)} on "
             + ", ".join(t.name for t in group))
        try:
            docker.check_ports_free(compose_file)
            try:
                docker.up(compose_file, wait_timeout=settings.wait_timeout_s)
                for fault in todo:
                    fault_targets = tuple(t for t in group if applies(fault, t))
                    session = Session(docker=docker, compose_file=compose_file,
                                      targets=fault_targets, settings=settings)
                    store.add(_one_fault(session=session, fault=fault, store=store, info=info))
            finally:
                docker.down(compose_file)
        except DockerError as exc:
            warn(str(exc))
            for fault in todo:
                store.add({"fault": fault, "compose_file": compose_file[0],
                           "overrides": list(compose_file[1:]),
                           "targets": [{"name": t.name, "title": t.title} for t in group
                                       if applies(fault, t)],
                           "error": str(exc).splitlines()[0]})


def _one_fault(*, session: Session, fault: str, store: FaultStore,
               info: Callable[[str], None]) -> dict:
    s = session.settings
    info(f"  {fault}: " + ", ".join(f"{t.name} (c={s.clients(t)})" for t in session.targets))
    session.record("up", "-d", "--wait")
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    if fault in STOPPED_SERVICE:
        result = run_outage(session=session, fault=fault)
    elif fault == "upstream-slowdown":
        result = run_slowdown(session=session)
    else:
        result = run_overload(session=session, run_id=store.data["run_id"],
                              raw_dir=store.run_dir / "raw")
    session.record("down", "--volumes")
    return {**result, "compose_file": session.compose_file[0],
            "overrides": list(session.compose_file[1:]), "started_at": started,
            "marks": session.marks, "commands": session.commands, "error": None}


# --- the report ---------------------------------------------------------------------------------
def _s(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f} s"


def _kinds(kinds: dict[str, int]) -> str:
    return ", ".join(f"{k}: {n}" for k, n in kinds.items()) or "—"


def _verdict(target: dict) -> str:
    return "ok" if not target.get("problems") else "**" + "; ".join(target["problems"]) + "**"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(data: dict) -> str:
    """faults.md: per fault, per mode, what happened; then the commands to do it by hand."""
    lines = [f"# Faults: run {data.get('run_id')}", ""]
    st = data.get("settings", {})
    lines += [f"Command: `{data.get('command', '')}`", "",
              f"Probe: closed loop, c per scenario = {st.get('concurrency') or 'its tutorial c'}, "
              f"delay {st.get('delay')} s; a failed request waits out the delay before the next. "
              "Time to recover: from the service's return until every request started from then "
              "on succeeded. Stuck workers: a burst of the scenario's tutorial concurrency after "
              f"the fault must not take more than {STUCK_FACTOR}x + {STUCK_SLACK_S:g} s the one "
              "before.", ""]
    if data.get("finished_at") is None:
        lines += ["**This run did not finish: the figures below are what it completed.**", ""]
    for run in data.get("runs", []):
        files = " + ".join([run["compose_file"], *run.get("overrides", [])])
        title = f"## {run['fault']} — `{files}`"
        lines += [title, ""]
        if run.get("error"):
            lines += [f"Could not run: {run['error']}", ""]
            continue
        fault = run["fault"]
        if fault in STOPPED_SERVICE:
            svc = run["stopped_service"]
            lines += [f"| scenario | c | answers (all) | while {svc} was down | longest answer "
                      f"while down (bound) | time to recover | stuck workers | verdict |",
                      "|---|---|---|---|---|---|---|---|"]
            for t in run["targets"]:
                lines.append("| " + " | ".join(_cell(x) for x in (
                    t["name"], str(t["concurrency"]), _kinds(t["kinds"]),
                    _kinds(t["phases"]["during"]["kinds"]),
                    f"{_s(t['longest_while_down_s'])} ({t['answer_bound_s']:g} s)",
                    _s(t["recover_s"]) if t["recover_s"] is not None else "not recovered",
                    "yes" if t["stuck"] else "no", _verdict(t))) + " |")
        elif fault == "upstream-slowdown":
            lines += ["| scenario | c | median before / slow / after | queueing while slow "
                      "(median excess) | 200/s before / slow / after | errors | back to normal "
                      "after | stuck workers | verdict |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for t in run["targets"]:
                ph = t["phases"]
                errors = {k: n for k, n in t["kinds"].items() if k != "200"}
                lines.append("| " + " | ".join(_cell(x) for x in (
                    t["name"], str(t["concurrency"]),
                    " / ".join(_s(ph[p]["p50_s"]) for p in ("before", "slow", "after")),
                    _s(ph["slow"]["excess_p50_s"]),
                    " / ".join(f"{ph[p]['ok_rps']:g}" for p in ("before", "slow", "after")),
                    _kinds(errors), _s(t["settle_s"]) if t["settle_s"] is not None else "never",
                    "yes" if t["stuck"] else "no", _verdict(t))) + " |")
        else:
            lines += ["| scenario | ab c | ab: complete, failed (connect/receive/length/"
                      "exceptions), non-2xx | ab latency p50 / p99 / max | where the load was shed | "
                      "a fresh request afterwards | stuck workers | verdict |",
                      "|---|---|---|---|---|---|---|---|"]
            for t in run["targets"]:
                ab = t["ab"]
                if ab.get("error"):
                    figures, latency = ab["error"], "—"
                else:
                    f = ab["failures"]
                    figures = (f"{ab['complete']}, {ab['failed']} ({f.get('connect', 0)}/"
                               f"{f.get('receive', 0)}/{f.get('length', 0)}/"
                               f"{f.get('exceptions', 0)}), {ab['non_2xx']}")
                    lat = ab["latency_ms"]
                    latency = " / ".join("—" if lat.get(k) is None else f"{lat[k] / 1000:.2f} s"
                                         for k in ("p50", "p99", "max"))
                lines.append("| " + " | ".join(_cell(x) for x in (
                    t["name"], str(t["concurrency"]), figures, latency, "; ".join(t["shed"]),
                    f"{t['drain_answer']} after {_s(t['drain_s'], 1)}",
                    "yes" if t["stuck"] else "no", _verdict(t))) + " |")
        lines.append("")
        notes = [f"- {t['name']}: {n}" for t in run["targets"] for n in t.get("notes", [])]
        notes += [f"- {t['name']}: {t['stuck_reason']}" for t in run["targets"]]
        lines += notes + [""]
        if fault != "overload":
            lines += ["Answers per second (by the second they arrived):", "", "```"]
            for t in run["targets"]:
                lines.append(f"{t['name']}:")
                lines += [f"  {row['t']:>5.0f} s  " + " ".join(
                    f"{k}:{n}" for k, n in row.items() if k != "t") for row in t["timeline"]]
            lines += ["```", ""]
        lines += ["Timeline (seconds since the session started): " + ", ".join(
            f"{m['t']:.1f} {m['label']}" for m in run.get("marks", [])), ""]
        lines += ["By hand:", "", "```sh", *run.get("commands", []), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_report(*, run_dir: Path, data: dict) -> Path:
    path = run_dir / "faults.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render_markdown(data))
    tmp.replace(path)
    return path


def problems(data: dict) -> list[str]:
    """Every problem any fault found, one line each (empty: every mode behaved)."""
    out = []
    for run in data.get("runs", []):
        if run.get("error"):
            out.append(f"{run['fault']} {run['compose_file']}: {run['error']}")
            continue
        for t in run["targets"]:
            out += [f"{run['fault']} {t['name']}: {p}" for p in t.get("problems", [])]
    return out


__all__ = ["FAULTS", "FaultSettings", "FaultStore", "Outcome", "Prober", "burst",
           "count_kinds", "longest_overlapping", "phase_stats", "render_markdown", "run_faults",
           "settle_time", "stuck_verdict", "time_to_recover", "timeline", "write_report"]

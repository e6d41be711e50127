"""An open-loop load generator: users arrive on a schedule, whatever the server is doing.

ab, wrk and the fault prober are closed loops: c clients, each waiting for its answer before it
sends again, so they slow down with the server and can never show a queue that grows without
bound. Here every visit starts at its own time on a schedule fixed in advance (a constant or a
Poisson arrival rate, which may change from one phase to the next), and nothing waits for an
answer before the next visit is sent.

A user who waits longer than the client timeout (or gets an error) gives up, waits a refresh
delay and sends the same request again, up to a number of attempts. Every attempt is one row:
visit, attempt, intended send time, actual send time, end time, outcome. Latency is counted
from the *intended* send time, so a generator that falls behind cannot hide a slow server
(coordinated omission); the generator checks its own send lag and marks the run invalid when
it could not keep the schedule.

Each attempt opens a connection of its own and closes it afterwards (no pool): a pool's limit
would cap the requests in flight and quietly close the loop again; and a user who gives up
closes the connection, as a browser tab does, so the server's side sees the client go.

    python openloop.py --url http://ingress:8080/?delay=0.7 --rate 60 --duration 90 \\
        --timeout 4 --refresh-delay 1 --max-attempts 3 \\
        --at '20:POST:http://slow_api:4000/control/slowdown?delay=2&seconds=30' \\
        --watch nginx=http://ingress:8081/stub_status --out /out/openloop.json
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import errno
import json
import math
import multiprocessing
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

import aiohttp
from openloop_schedule import (
    ARRIVALS,
    ENGINES,
    MAX_PROCESSES,
    Event,
    Settings,
    SettingsError,
    Watch,
    arrival_times,
    parse_event,
    parse_phases,
    parse_watch,
    refresh_wait,
)
from openloop_schedule import Phase as Phase  # re-exported: callers build schedules from here

try:  # uvloop is installed in the image; the generator also runs (slower) without it
    import uvloop
except ImportError:  # pragma: no cover - depends on the environment
    uvloop = None

# The self-check, as strict as the figures need (docs/story.md, "How far to trust the
# figures"): the figures are counted in one-second bins and the shortest latency the story
# measures is its third party's normal 0.7 s. A p99 send lag of 10 ms moves under 1% of the
# sends into a later bin than planned and is under 1.5% of that latency; a latency is counted
# from the intended send, so a late send only ever adds to it. With fewer than 100 sends (a
# sweep's slow step) a nearest-rank p99 is the largest lag, and one send is more than 1% of
# them: there the rule allows that one send, as it does from 100 to 199 sends.
MAX_SEND_LAG_P99_S = 0.010
# The longest any single send may lag: a tenth of a bin, 2.5% of a user's 4 s of patience.
MAX_SEND_LAG_S = 0.100
WATCH_INTERVAL_S = 1.0
# With several processes, second 0 is this far after the parent's start: every process is
# waiting on the shared monotonic clock by then.
START_AFTER_S = 0.5
WATCH_TIMEOUT_S = 0.8
SENDER = "openloop-sender"
EVENT_TIMEOUT_S = 10.0
SUCCESS = "ok"
DEGRADED = "degraded"
DRY = "dry"  # --dry: the attempt was scheduled and not sent


# --- one attempt ----------------------------------------------------------------------------
@dataclass
class Attempt:
    visit: int
    attempt: int
    intended: float
    sent: float
    end: float = math.nan
    # "ok", "degraded" (a 2xx marked X-Degraded: a lesser page), "status", "timeout",
    # "refused", "reset", "error"
    outcome: str = ""
    status: int = 0  # the HTTP status when the server answered, else 0
    detail: str = ""

    @property
    def latency(self) -> float:
        """From the intended send to the end: what the user waited, lag included."""
        return self.end - self.intended


COLUMNS = ("visit", "attempt", "intended", "sent", "end", "outcome", "status", "detail")


def classify(exc: BaseException) -> tuple[str, str]:
    """(outcome, detail) of an attempt that got no HTTP answer."""
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return "timeout", ""
    cause = exc
    for _ in range(4):  # aiohttp wraps the OSError; look through a few layers
        if isinstance(cause, ConnectionRefusedError) or (
            isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED
        ):
            return "refused", str(exc)[:120]
        if isinstance(cause, ConnectionResetError | BrokenPipeError) or (
            isinstance(cause, OSError) and cause.errno in (errno.ECONNRESET, errno.EPIPE)
        ):
            return "reset", str(exc)[:120]
        nxt = getattr(cause, "os_error", None) or cause.__cause__ or cause.__context__
        if nxt is None or nxt is cause:
            break
        cause = nxt
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return "reset", str(exc)[:120] or type(exc).__name__
    return "error", f"{type(exc).__name__}: {exc}"[:160]


class Generator:
    """Runs one schedule against one URL and keeps every attempt."""

    def __init__(self, settings: Settings, *, shard: int = 0, t0: float | None = None) -> None:
        self.s = settings
        # This process sends the visits whose number modulo the processes is its shard; the
        # first one also sends the events and polls the watches.
        self.shard = shard
        self._start_at = t0
        self.attempts: list[Attempt] = []
        self.events: list[dict] = []
        self.watches: list[dict] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._t0 = 0.0
        self.loop_name = ""
        self.t0_wall = 0.0

    def now(self) -> float:
        return time.monotonic() - self._t0

    async def _sleep_until(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            await asyncio.sleep(delay)

    async def _attempt(
        self, session: aiohttp.ClientSession, visit: int, n: int, intended: float
    ) -> Attempt:
        row = Attempt(visit=visit, attempt=n, intended=intended, sent=self.now())
        self.attempts.append(row)
        if self.s.dry:
            row.outcome, row.end = DRY, row.sent
            return row
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            # The user gives up at the intended time + timeout, however late the send left.
            left = max(0.001, intended + self.s.timeout - row.sent)
            async with session.get(self.s.url, timeout=aiohttp.ClientTimeout(total=left)) as resp:
                await resp.read()
                row.status = resp.status
                row.outcome = (
                    "status"
                    if not 200 <= resp.status < 300
                    else DEGRADED
                    if resp.headers.get("X-Degraded")
                    else SUCCESS
                )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            row.outcome, row.detail = classify(exc)
        finally:
            row.end = self.now()
            self.in_flight -= 1
        return row

    async def _visit(self, session: aiohttp.ClientSession, visit: int, start: float) -> None:
        """One user: the first attempt at its intended time, then refreshes after failures."""
        intended = start
        for n in range(1, self.s.max_attempts + 1):
            await self._sleep_until(intended)
            row = await self._attempt(session, visit, n, intended)
            if row.outcome in (SUCCESS, DEGRADED, DRY):
                return  # a page, if a lesser one: the user does not reload
            # The user notices at the end of this attempt, waits, and reloads the page.
            intended = row.end + refresh_wait(self.s, visit=visit, attempt=n)

    async def _event(self, session: aiohttp.ClientSession, event: Event) -> None:
        await self._sleep_until(event.at)
        record = {"at": event.at, "sent": self.now(), "method": event.method, "url": event.url}
        try:
            async with session.request(
                event.method, event.url, timeout=aiohttp.ClientTimeout(total=EVENT_TIMEOUT_S)
            ) as resp:
                record.update(status=resp.status, body=(await resp.text())[:500])
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            record.update(status=0, body=f"{type(exc).__name__}: {exc}"[:500])
        record["end"] = self.now()
        self.events.append(record)

    async def _watch(self, session: aiohttp.ClientSession, watch: Watch, until: float) -> None:
        tick = 0
        while (t := tick * WATCH_INTERVAL_S) <= until:
            await self._sleep_until(t)
            if self.now() > until:
                break
            sent = self.now()
            record = {"name": watch.name, "t": sent}
            try:
                async with session.get(
                    watch.url, timeout=aiohttp.ClientTimeout(total=WATCH_TIMEOUT_S)
                ) as resp:
                    record.update(status=resp.status, body=await resp.text())
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                record.update(status=0, body=f"{type(exc).__name__}: {exc}"[:200])
            self.watches.append(record)
            tick += 1

    async def run(self) -> dict:
        s = self.s
        schedule = arrival_times(s)
        # limit=0: no cap on connections; force_close: one connection per attempt, closed when
        # the attempt ends (a timed-out user's connection is closed, as a closed tab's is).
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, force_close=True)
        timeout = aiohttp.ClientTimeout(total=s.timeout)
        async with (
            aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
            aiohttp.ClientSession(timeout=timeout) as side,
        ):
            self.loop_name = type(asyncio.get_running_loop()).__module__.split(".")[0]
            self._t0 = time.monotonic() if self._start_at is None else self._start_at
            self.t0_wall = time.time() + (self._t0 - time.monotonic())
            side_tasks = []
            if self.shard == 0:
                side_tasks += [asyncio.ensure_future(self._event(side, e)) for e in s.events]
                side_tasks += [
                    asyncio.ensure_future(self._watch(side, w, s.duration)) for w in s.watches
                ]
            visits = []
            for visit, start in enumerate(schedule):
                if visit % s.processes != self.shard:
                    continue
                await self._sleep_until(start)
                visits.append(asyncio.ensure_future(self._visit(session, visit, start)))
            sent_all = self.now()
            # Bounded: every attempt ends within the timeout, every visit within its attempts.
            await asyncio.gather(*visits)
            # Watches carry on to the end of the run even when the visits are done early.
            await asyncio.gather(*side_tasks)
            finished = self.now()
        return self.result(schedule_len=len(schedule), sent_all=sent_all, finished=finished)

    def result(self, *, schedule_len: int, sent_all: float, finished: float) -> dict:
        rows = [
            [getattr(a, c) for c in COLUMNS]
            for a in sorted(self.attempts, key=lambda a: (a.intended, a.visit, a.attempt))
        ]
        return assemble(
            self.s,
            loop=self.loop_name,
            t0=self._t0,
            t0_wall=self.t0_wall,
            visits=schedule_len,
            sent_all=sent_all,
            finished=finished,
            peak_in_flight=self.peak_in_flight,
            attempts=rows,
            events=self.events,
            watches=self.watches,
        )


def assemble(
    s: Settings,
    *,
    loop: str,
    t0: float,
    t0_wall: float,
    visits: int,
    sent_all: float,
    finished: float,
    peak_in_flight: int,
    attempts: list[list],
    events: list[dict],
    watches: list[dict],
) -> dict:
    """The result, whichever engine sent it: every attempt (rows in COLUMNS' order, sorted by
    intended send) and the self-check over their send lags."""
    lags = sorted(r[3] - r[2] for r in attempts)
    return {
        "tool": "openloop",
        "settings": settings_dict(s),
        "loop": loop,
        # When the run's second 0 was: on the machine's monotonic clock (shared by every
        # container) and its wall clock, to line other records up with the attempts.
        "t0_monotonic": t0,
        "t0_wall": t0_wall,
        "visits": visits,
        "sent_all_s": sent_all,
        "finished_s": finished,
        "peak_in_flight": peak_in_flight,
        "check": self_check(lags),
        "columns": list(COLUMNS),
        "attempts": attempts,
        "events": events,
        "watches": watches,
    }


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (q in 0..100)."""
    if not sorted_values:
        return math.nan
    k = max(0, math.ceil(q / 100 * len(sorted_values)) - 1)
    return sorted_values[k]


def late_sends_allowed(sends: int) -> int:
    """How many sends may leave more than 10 ms late: 1% of them (what a nearest-rank p99 of
    at most 10 ms allows from 100 sends on), and never fewer than one."""
    return max(1, sends // 100)


def self_check(sorted_lags: list[float]) -> dict:
    """Did the generator keep its schedule? Invalid when more than 1% of the sends (and more
    than one) lagged by more than 10 ms, the p99 bound, or any send lagged by more than 100 ms
    (the schedule was not kept)."""
    p50, p99 = percentile(sorted_lags, 50), percentile(sorted_lags, 99)
    worst = sorted_lags[-1] if sorted_lags else math.nan
    late = len(sorted_lags) - bisect.bisect_right(sorted_lags, MAX_SEND_LAG_P99_S)
    reasons = []
    if late > late_sends_allowed(len(sorted_lags)):
        reasons.append(
            f"send lag p99 {p99 * 1000:.1f} ms > {MAX_SEND_LAG_P99_S * 1000:g} ms "
            f"({late} of {len(sorted_lags)} sends later than that)"
        )
    if sorted_lags and worst > MAX_SEND_LAG_S:
        reasons.append(
            f"schedule not kept: a send lagged {worst * 1000:.0f} ms "
            f"(> {MAX_SEND_LAG_S * 1000:g} ms)"
        )
    return {
        "valid": not reasons,
        "reasons": reasons,
        "send_lag_p50_s": p50,
        "send_lag_p99_s": p99,
        "send_lag_max_s": worst,
    }


def settings_dict(s: Settings) -> dict:
    return asdict(s)


def _run_shard(settings: Settings, shard: int, t0: float | None) -> dict:
    if uvloop is not None:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return asyncio.run(Generator(settings, shard=shard, t0=t0).run())


class SenderError(RuntimeError):
    """The compiled sender is missing or failed; the message says why."""


def compiled_plan(s: Settings, *, t0: float) -> dict:
    """What the compiled sender needs: the schedule fixed here (every visit's start, every
    reload's wait), the clock's second 0, the events and watches."""
    schedule = arrival_times(s)
    return {
        "url": s.url,
        "timeout": s.timeout,
        "t0_monotonic": t0,
        "duration": s.duration,
        "dry": s.dry,
        "threads": s.processes,
        "visits": list(enumerate(schedule)),
        "waits": [
            [refresh_wait(s, visit=v, attempt=n) for n in range(1, s.max_attempts)]
            for v in range(len(schedule))
        ],
        "events": [asdict(e) for e in s.events],
        "watches": [asdict(w) for w in s.watches],
        "watch_interval": WATCH_INTERVAL_S,
        "watch_timeout": WATCH_TIMEOUT_S,
        "event_timeout": EVENT_TIMEOUT_S,
    }


def run_compiled(s: Settings) -> dict:
    """The schedule sent by the compiled sender; this process only waits for it."""
    sender = shutil.which(SENDER)
    if sender is None:
        raise SenderError(
            f"the tokio engine needs {SENDER} on PATH (the load generator's "
            "image has it); --engine asyncio runs without it"
        )
    t0 = time.monotonic() + START_AFTER_S
    t0_wall = time.time() + (t0 - time.monotonic())
    plan = compiled_plan(s, t0=t0)
    proc = subprocess.run(
        [sender], input=json.dumps(plan), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SenderError(f"{SENDER} failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    out = json.loads(proc.stdout)
    return assemble(
        s,
        loop=out["engine"],
        t0=t0,
        t0_wall=t0_wall,
        visits=len(plan["visits"]),
        sent_all=out["sent_all_s"],
        finished=out["finished_s"],
        peak_in_flight=out["peak_in_flight"],
        attempts=out["attempts"],
        events=out["events"],
        watches=out["watches"],
    )


def run(settings: Settings) -> dict:
    if settings.engine == "tokio":
        return run_compiled(settings)
    if settings.processes == 1:
        return _run_shard(settings, 0, None)
    t0 = time.monotonic() + START_AFTER_S
    # fork: each process starts with this one's settings and modules, before any event loop.
    with multiprocessing.get_context("fork").Pool(settings.processes) as pool:
        parts = pool.starmap(_run_shard, [(settings, k, t0) for k in range(settings.processes)])
    return merge(parts)


def merge(parts: list[dict]) -> dict:
    """One result from the processes' results: every attempt, the self-check and the peak in
    flight over all of them, the events and watches of the first."""
    cols = parts[0]["columns"]
    i_visit, i_attempt, i_intended, i_sent, i_end = (
        cols.index(c) for c in ("visit", "attempt", "intended", "sent", "end")
    )
    attempts = sorted(
        (row for p in parts for row in p["attempts"]),
        key=lambda r: (r[i_intended], r[i_visit], r[i_attempt]),
    )
    edges = sorted([(r[i_sent], 1) for r in attempts] + [(r[i_end], -1) for r in attempts])
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return {
        **parts[0],
        "sent_all_s": max(p["sent_all_s"] for p in parts),
        "finished_s": max(p["finished_s"] for p in parts),
        "peak_in_flight": peak,
        "check": self_check(sorted(r[i_sent] - r[i_intended] for r in attempts)),
        "attempts": attempts,
        "events": [e for p in parts for e in p["events"]],
        "watches": [w for p in parts for w in p["watches"]],
    }


# --- command line ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="openloop", description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="the page the users ask for")
    p.add_argument(
        "--rate",
        required=True,
        help="visits/s: RATE, or phases RATE@SECONDS,...,RATE (last to the end)",
    )
    p.add_argument("--duration", type=float, required=True, help="seconds of arrivals")
    p.add_argument("--arrival", choices=ARRIVALS, default="poisson")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--timeout",
        type=float,
        required=True,
        help="seconds a user waits for an answer before giving up",
    )
    p.add_argument(
        "--refresh-backoff",
        type=float,
        default=1.0,
        help="users back off: each reload waits this many times longer than the "
        "one before, with jitter (default 1: no backoff)",
    )
    p.add_argument(
        "--refresh-delay",
        type=float,
        default=1.0,
        help="seconds a user waits after giving up before reloading",
    )
    p.add_argument(
        "--max-attempts", type=int, default=3, help="attempts per visit, the first included"
    )
    p.add_argument("--no-refresh", action="store_true", help="same as --max-attempts 1")
    p.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="SECONDS:METHOD:URL",
        help="send one request at a fixed time of the run (repeatable)",
    )
    p.add_argument(
        "--watch",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="poll a status URL every second during the run (repeatable)",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=2,
        help="deal the visits to this many processes, an event loop each "
        f"(1 to {MAX_PROCESSES}; default 2)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="tokio",
        help="who sends: the compiled sender (tokio, default) or this file's own asyncio loops",
    )
    p.add_argument(
        "--dry",
        action="store_true",
        help="keep the schedule but send nothing: the send lag of the machine alone",
    )
    p.add_argument("--out", help="write the JSON result here (default: stdout)")
    return p


def settings_from_args(args: argparse.Namespace) -> Settings:
    return Settings(
        url=args.url,
        phases=parse_phases(args.rate),
        duration=args.duration,
        timeout=args.timeout,
        arrival=args.arrival,
        seed=args.seed,
        refresh_delay=args.refresh_delay,
        refresh_backoff=args.refresh_backoff,
        max_attempts=1 if args.no_refresh else args.max_attempts,
        events=tuple(parse_event(e) for e in args.at),
        watches=tuple(parse_watch(w) for w in args.watch),
        dry=args.dry,
        processes=args.processes,
        engine=args.engine,
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except SettingsError as exc:
        print(f"openloop: {exc}", file=sys.stderr)
        return 2
    try:
        result = run(settings)
    except SenderError as exc:
        print(f"openloop: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(result, separators=(",", ":"))
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)
    c = result["check"]
    print(
        f"openloop: {len(result['attempts'])} attempts for {result['visits']} visits; "
        f"send lag p99 {c['send_lag_p99_s'] * 1000:.2f} ms; "
        f"{'valid' if c['valid'] else 'INVALID: ' + '; '.join(c['reasons'])}",
        file=sys.stderr,
    )
    return 0 if c["valid"] else 3


if __name__ == "__main__":
    sys.exit(main())

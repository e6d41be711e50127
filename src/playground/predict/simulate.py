"""The users and nginx around the app server, on SimPy's clock: one run through the incident.

Users arrive on the generator's schedule (:mod:`.schedule`), send at the intended time (the
model has no send lag), wait up to their timeout from the intended send, and after a failure
or a timeout wait the reload delay and send again, up to their attempts; a page, if a lesser
one, ends the visit. nginx, per request: `limit_conn` answers 503 at once past N in flight; the
connection to the app waits for room in the kernel's queue (Linux drops the SYN of a connection
that finds it full and the client sends it again after 1, 2, 4 ... s; with
`tcp_abort_on_overflow` the retransmission that still finds it full is reset: a 502); the read
timeout answers 504 while the app's work goes on; a user who hangs up is a 499, and the app
serves the request all the same. With HAProxy between them (:mod:`.haproxy`), nginx's
connection goes to HAProxy at once and HAProxy connects to the app when a slot is free, or
answers 503 after its queue timeout. Out come the records a measured run has: the users'
attempts, nginx's access log, the third party's calls, the servers' figures each second.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from playground.incident.analysis import Attempt
from playground.incident.captured import AccessRecord, ServerSample, UpstreamCall
from playground.incident.settings import StorySettings
from playground.predict import schedule
from playground.predict.app import DEGRADED, OK, App
from playground.predict.clock import Clock, Process
from playground.predict.haproxy import Queue
from playground.predict.healthchecks import Check
from playground.predict.servers import Connection, Server
from playground.predict.system import NGINX_TIMEOUT_S, System

#: Linux's first SYN retransmission, then doubling (TCP_TIMEOUT_INIT).
SYN_RETRY_S = 1.0
LIMIT_CONN_S = 0.002  # nginx's 503 at once (measured 1-2 ms, docs/story.md)
BAD_GATEWAY, GATEWAY_TIMEOUT, LIMITED, GONE = 502, 504, 503, 499
QUEUE_TIMED_OUT = 503  # HAProxy's answer after `timeout queue`


@dataclass
class Records:
    """What one simulated run leaves, in the shapes the analysis reads."""

    attempts: list[Attempt] = field(default_factory=list)
    access: list[AccessRecord] = field(default_factory=list)
    calls: list[UpstreamCall] = field(default_factory=list)
    samples: list[ServerSample] = field(default_factory=list)
    spans: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


@dataclass
class Open:
    """One attempt in flight: the user's side and nginx's side end separately."""

    visit: int
    n: int
    intended: float
    rid: str
    counted: bool = False  # nginx counts it among its connections (limit_conn)
    check: Check | None = None  # a health check's request, not a user's
    nginx_done: bool = False
    user_done: bool = False


class Simulation:
    """Users and nginx as callbacks on the clock's events (cheaper than a process each); the
    app's threads as processes (:mod:`.app`)."""

    def __init__(
        self,
        system: System,
        settings: StorySettings,
        *,
        delay: float,
        incident: bool,
        upstream: Callable[[float], float] | None = None,
        ended: Callable[[int, bool], bool] | None = None,
    ) -> None:
        """`upstream`: the third party's time for a call arriving at t; by default `delay`, and
        the incident's extra during it (slow_api's control) where `incident` is set.
        `ended(visit, served)`: told as each visit ends; True stops the run there (its caller
        has its answer, and the records stop short)."""
        self.clock = Clock()
        self.system, self.s = system, settings
        rng = random.Random(settings.seed if settings.system_seed is None else settings.system_seed)
        start, end = settings.before_s, settings.before_s + settings.incident_s
        extra = settings.extra_delay if incident else 0.0
        self.app = App(
            clock=self.clock,
            system=system,
            delay=delay,
            took=upstream or (lambda t: delay + (extra if start <= t < end else 0.0)),
            rng=random.Random(rng.random()),
        )
        self.server = Server(system=system, rng=random.Random(rng.random()), start=self._serve)
        self.records = Records(spans={"nginx": [], "busy": []})
        self.active = 0
        self.opened: dict[str, Open] = {}
        self.haproxy = Queue(system.haproxy) if system.haproxy else None
        self.conns: dict[str, Connection] = {}  # waiting in HAProxy's queue
        self.ended = ended
        self.checks_rng = random.Random(rng.random())

    def _after(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        self.clock.after(max(0.0, delay), fn, *args)

    # --- the app's side -------------------------------------------------------------------
    def _serve(self, c: Connection) -> None:
        self.clock.start(self._thread(c))

    def _thread(self, c: Connection) -> Process:
        began = self.clock.now
        answer = yield from self.app.respond(
            c.rid, waited_since=c.arrived, worker=c.worker, asked=c.asked
        )
        self.records.spans["busy"].append((began, self.clock.now))
        self.server.finish(c, self.clock.now)
        self._nginx_end(self.opened[c.rid], answer)
        self._haproxy_next()

    # --- HAProxy, where a remedy puts it between nginx and the app --------------------------
    def _haproxy(self, a: Open, conn: Connection) -> None:
        """nginx's connection to HAProxy is accepted at once; the request goes on to the app
        now, or waits in HAProxy's queue for a slot or its queue timeout."""
        assert self.haproxy is not None and self.system.haproxy is not None
        self._after(self.system.read_timeout, self._nginx_end, a, GATEWAY_TIMEOUT)
        if self.haproxy.arrive(a.rid, self.clock.now):
            self._connect(a, conn, SYN_RETRY_S)
            return
        self.conns[a.rid] = conn
        self._after(self.system.haproxy.queue_timeout, self._queue_timeout, a)

    def _queue_timeout(self, a: Open) -> None:
        assert self.haproxy is not None
        if self.haproxy.expired(a.rid):
            del self.conns[a.rid]
            self._nginx_end(a, QUEUE_TIMED_OUT)

    def _haproxy_next(self) -> None:
        """A slot to the app is free again: the oldest queued request takes it."""
        if self.haproxy is not None and (rid := self.haproxy.answered()) is not None:
            self._connect(self.opened[rid], self.conns.pop(rid), SYN_RETRY_S)

    # --- nginx ----------------------------------------------------------------------------
    def _nginx(self, a: Open) -> None:
        limit = self.system.limit_conn
        if limit is not None and self.active >= limit:
            self._after(LIMIT_CONN_S, self._nginx_end, a, LIMITED)
            return
        self.active += 1
        a.counted = True
        conn = Connection(rid=a.rid, arrived=self.clock.now, asked=self._asked(a))
        if self.haproxy is not None:
            self._haproxy(a, conn)
        else:
            self._connect(a, conn, SYN_RETRY_S)

    def _connect(self, a: Open, conn: Connection, wait: float) -> None:
        """Into the app's queue, or the SYN again after `wait` (Linux drops it while full).
        nginx's connection, or HAProxy's, which holds its slot until the connection fails or
        the app answers; with abortonclose HAProxy gives up connecting once nginx has gone."""
        haproxy = self.system.haproxy
        if a.nginx_done and (haproxy is None or haproxy.abort_on_close):
            self._haproxy_next()  # the slot, where HAProxy held one for it
            return
        through = haproxy is not None
        if self.server.offer(conn, self.clock.now):
            if not through:
                self._after(self.system.read_timeout, self._nginx_end, a, GATEWAY_TIMEOUT)
            return
        if self.system.abort_on_overflow and wait > SYN_RETRY_S:
            status = BAD_GATEWAY
        elif self.clock.now - conn.arrived + wait > NGINX_TIMEOUT_S:
            status = GATEWAY_TIMEOUT
        else:
            self._after(wait, self._connect, a, conn, 2 * wait)
            return
        self._nginx_end(a, status)
        self._haproxy_next()

    def _nginx_end(self, a: Open, status: Any) -> None:
        """nginx ends the request (the app's answer, its own 503/502/504, or the user gone: 499);
        whatever comes later for it finds it ended."""
        if a.nginx_done:
            return
        a.nginx_done = True
        now = self.clock.now
        if a.counted:
            self.active -= 1
            self.records.spans["nginx"].append((a.intended, now))
        if self.haproxy is not None and self.haproxy.closed(a.rid):
            del self.conns[a.rid]
        code = OK if status == DEGRADED else int(status)
        if a.check is None or a.check.entry == "nginx":
            self.records.access.append(AccessRecord(now, code, now - a.intended, a.rid))
        if status != GONE:
            self._user_end(a, status)

    # --- Docker's health checks (:mod:`.healthchecks`) ------------------------------------
    @staticmethod
    def _asked(a: Open) -> float | None:
        """The delay a request asks for where it is not the users' (a check's)."""
        return None if a.check is None else a.check.asked_s

    def _check(self, check: Check, n: int) -> None:
        """A check's request where it enters, while the users send; the next one starts the
        interval (and Docker's start of it) after this one ends or gives up."""
        if self.clock.now >= self.s.duration:
            return
        a = Open(-1, n, self.clock.now, f"check.{check.entry}.{n}", check=check)
        self.opened[a.rid] = a
        self._after(check.timeout_s, self._give_up, a)
        if check.entry == "nginx":
            self._nginx(a)
            return
        conn = Connection(rid=a.rid, arrived=self.clock.now, asked=self._asked(a))
        if check.entry == "haproxy" and self.haproxy is not None:
            self._haproxy(a, conn)
        else:
            self._connect(a, conn, SYN_RETRY_S)

    # --- the users ------------------------------------------------------------------------
    def _send(self, visit: int, n: int, intended: float) -> None:
        a = Open(visit, n, intended, f"{visit}.{n}")
        self.opened[a.rid] = a
        self._after(intended + self.s.timeout - self.clock.now, self._give_up, a)
        self._nginx(a)

    def _give_up(self, a: Open) -> None:
        if not a.user_done:
            self._user_end(a, None)
            self._nginx_end(a, GONE)

    def _user_end(self, a: Open, status: Any) -> None:
        if a.user_done:
            return
        a.user_done = True
        if a.check is not None:
            self._after(a.check.gap_s, self._check, a.check, a.n + 1)
            return
        if status is None:
            outcome, code = "timeout", 0
        else:
            outcome = "ok" if status == OK else "degraded" if status == DEGRADED else "status"
            code = OK if status == DEGRADED else int(status)
        now = self.clock.now
        self.records.attempts.append(
            Attempt(a.visit, a.n, a.intended, a.intended, now, outcome, code)
        )
        if outcome in ("ok", "degraded") or a.n >= self.s.max_attempts:
            if self.ended is not None and self.ended(a.visit, outcome == "ok"):
                self.clock.stop()
            return
        s = self.s
        wait = schedule.refresh_wait(
            delay=s.refresh_delay,
            backoff=s.refresh_backoff,
            seed=s.seed,
            visit=a.visit,
            attempt=a.n,
        )
        self._after(wait, self._send, a.visit, a.n + 1, now + wait)

    def run(self, arrivals: Sequence[float], *, sampled: bool = True) -> Records:
        """The run's records; `sampled=False`: the attempts and nginx's log alone (what a
        verdict needs), without the per-second samples of the servers."""
        for visit, start in enumerate(arrivals):
            self._after(start, self._send, visit, 1, start)
        for check in self.system.checks:  # each at its own phase, as the containers started
            self._after(self.checks_rng.uniform(0, check.gap_s), self._check, check, 1)
        self.clock.run()
        r = self.records
        if self.clock.stopped or not sampled:
            return r  # stopped short, or not asked for: nothing drawn
        r.calls = [UpstreamCall(c.request_id, c.arrived, c.answered) for c in self.app.calls]
        r.spans["upstream"] = [(c.arrived, c.answered) for c in self.app.calls]
        r.spans["queue"] = self.server.queue_spans
        # Up to the last attempt's end (the users' idle timers run on, to no effect, after it).
        last = max((a.end for a in r.attempts), default=0.0)
        r.samples = samples(r.spans, seconds=int(max(last, self.s.duration)) + 1)
        return r


#: The per-second figures the model draws, from its spans, by StorySecond's names.
SAMPLED = {
    "upstream": "upstream_in_flight",
    "busy": "busy_cores",
    "nginx": "nginx_active",
    "queue": "listen_queue",
}


def at_each_second(spans: Sequence[tuple[float, float]], seconds: int) -> list[int]:
    """How many spans are open at the end of each second (s + 1 - a hair)."""
    counts = [0] * seconds
    for a, b in spans:
        first, last = max(0, int(a)), min(seconds, int(b - 1e-9) + 1) if b > a else 0
        for k in range(first, last):
            if a <= k + 0.999 < b:
                counts[k] += 1
    return counts


def samples(spans: dict[str, list[tuple[float, float]]], *, seconds: int) -> list[ServerSample]:
    series = {SAMPLED[k]: at_each_second(v, seconds) for k, v in spans.items() if k in SAMPLED}
    return [
        ServerSample(monotonic=k + 0.999, figures={n: float(v[k]) for n, v in series.items()})
        for k in range(seconds)
    ]

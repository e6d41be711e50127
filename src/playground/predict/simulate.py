"""The users and nginx around the app server, on SimPy's clock: one run through the incident.

Users arrive on the generator's schedule (:mod:`.schedule`), send at the intended time (the
model has no send lag), wait up to their timeout from the intended send, and after a failure
or a timeout wait the reload delay and send again, up to their attempts; a page, if a lesser
one, ends the visit. nginx, per request: `limit_conn` answers 503 at once past N in flight; the
connection to the app waits for room in the kernel's queue (Linux drops the SYN of a connection
that finds it full and the client sends it again after 1, 2, 4 ... s; with
`tcp_abort_on_overflow` the retransmission that still finds it full is reset: a 502); the read
timeout answers 504 while the app's work goes on; a user who hangs up is a 499, and the app
serves the request all the same. Out come the records a measured run has: the users'
attempts, nginx's access log, the third party's calls, the servers' figures each second.
"""

from __future__ import annotations

import random
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import simpy

from playground.incident.analysis import Attempt
from playground.incident.records import AccessRecord, ServerSample, UpstreamCall
from playground.predict import schedule
from playground.predict.app import DEGRADED, OK, App
from playground.predict.servers import Connection, Server
from playground.predict.system import NGINX_TIMEOUT_S, System
from playground.storymodel import StorySettings

#: Linux's first SYN retransmission, then doubling (TCP_TIMEOUT_INIT).
SYN_RETRY_S = 1.0
LIMIT_CONN_S = 0.002  # nginx's 503 at once (measured 1-2 ms, docs/story.md)
BAD_GATEWAY, GATEWAY_TIMEOUT, LIMITED, GONE = 502, 504, 503, 499


@dataclass
class Records:
    """What one simulated run leaves, in the shapes the analysis reads."""

    attempts: list[Attempt] = field(default_factory=list)
    access: list[AccessRecord] = field(default_factory=list)
    calls: list[UpstreamCall] = field(default_factory=list)
    samples: list[ServerSample] = field(default_factory=list)
    spans: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


@dataclass
class Request:
    rid: str
    reply: simpy.Event  # nginx's answer to the user: a status, or DEGRADED
    gone: simpy.Event  # the user hung up


class Simulation:
    def __init__(
        self, system: System, settings: StorySettings, *, delay: float, incident: bool
    ) -> None:
        self.env = simpy.Environment()
        self.system, self.s = system, settings
        rng = random.Random(settings.seed)
        start, end = settings.before_s, settings.before_s + settings.incident_s
        extra = settings.extra_delay if incident else 0.0
        self.app = App(
            env=self.env,
            system=system,
            delay=delay,
            extra=lambda t: extra if start <= t < end else 0.0,
            rng=random.Random(rng.random()),
        )
        self.server = Server(system=system, rng=random.Random(rng.random()), start=self._serve)
        self.records = Records(spans={"nginx": [], "busy": []})
        self.active = 0
        self.app_done: dict[str, simpy.Event] = {}

    def _serve(self, c: Connection) -> None:
        self.env.process(self._thread(c))

    def _thread(self, c: Connection) -> Generator[simpy.Event, Any, None]:
        began = self.env.now
        answer = yield from self.app.respond(c.rid, waited_since=c.arrived, worker=c.worker)
        self.records.spans["busy"].append((began, self.env.now))
        self.server.finish(c, self.env.now)
        self.app_done[c.rid].succeed(answer)

    def _connect(self, req: Request) -> Generator[simpy.Event, Any, Any]:
        """Into the app's queue: None when in, else nginx's status (or GONE)."""
        env, wait, arrived = self.env, SYN_RETRY_S, self.env.now
        conn = Connection(rid=req.rid, arrived=arrived)
        self.app_done[req.rid] = env.event()
        while not self.server.offer(conn, env.now):
            if env.now - arrived + wait > NGINX_TIMEOUT_S:
                return GATEWAY_TIMEOUT
            fired = yield env.timeout(wait) | req.gone
            if req.gone in fired:
                return GONE
            if self.system.abort_on_overflow and not self.server.offer(conn, env.now):
                return BAD_GATEWAY
            elif self.system.abort_on_overflow:
                return None
            wait *= 2
        return None

    def _nginx(self, req: Request) -> Generator[simpy.Event, Any, None]:
        env, began = self.env, self.env.now
        limit = self.system.limit_conn
        if limit is not None and self.active >= limit:
            yield env.timeout(LIMIT_CONN_S)
            self._log(req, began, LIMITED)
            return
        self.active += 1
        status = yield from self._connect(req)
        if status is None:
            done = self.app_done[req.rid]
            fired = yield done | req.gone | env.timeout(self.system.read_timeout)
            status = done.value if done in fired else GONE if req.gone in fired else GATEWAY_TIMEOUT
        self.active -= 1
        self.records.spans["nginx"].append((began, env.now))
        self._log(req, began, status)

    def _log(self, req: Request, began: float, status: Any) -> None:
        code = OK if status == DEGRADED else int(status)
        self.records.access.append(AccessRecord(self.env.now, code, self.env.now - began, req.rid))
        if status != GONE and not req.reply.triggered:
            req.reply.succeed(status)

    def _visit(self, visit: int, start: float) -> Generator[simpy.Event, Any, None]:
        env, s, intended = self.env, self.s, start
        for n in range(1, s.max_attempts + 1):
            yield env.timeout(max(0.0, intended - env.now))
            req = Request(rid=f"{visit}.{n}", reply=env.event(), gone=env.event())
            env.process(self._nginx(req))
            fired = yield req.reply | env.timeout(max(0.0, intended + s.timeout - env.now))
            if req.reply in fired:
                status = req.reply.value
                outcome = "ok" if status == OK else "degraded" if status == DEGRADED else "status"
                code = OK if status == DEGRADED else int(status)
            else:
                req.gone.succeed()
                outcome, code = "timeout", 0
            self.records.attempts.append(
                Attempt(visit, n, intended, intended, env.now, outcome, code)
            )
            if outcome in ("ok", "degraded"):
                return
            wait = schedule.refresh_wait(
                delay=s.refresh_delay, backoff=s.refresh_backoff, seed=s.seed, visit=visit, attempt=n
            )
            intended = env.now + wait

    def run(self, arrivals: Sequence[float]) -> Records:
        for visit, start in enumerate(arrivals):
            self.env.process(self._visit(visit, start))
        self.env.run()
        r = self.records
        r.calls = [UpstreamCall(c.request_id, c.arrived, c.answered) for c in self.app.calls]
        r.spans["upstream"] = [(c.arrived, c.answered) for c in self.app.calls]
        r.spans["queue"] = self.server.queue_spans
        r.samples = samples(r.spans, seconds=int(self.env.now) + 1)
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

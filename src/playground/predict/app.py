"""The Flask app's one call to the third party, as flask_app/app.py and remedies.py make it.

Per request, in the thread (or greenlet) that serves it: the app's CPU under its process's GIL;
the deadline (a request that waited longer than DEADLINE since nginx took it is refused, 503,
without a call); then the call through the breaker, retried within the budget. The call waits
for the third party's answer or the read timeout, whichever comes first: the delay asked for
plus the grace, or UPSTREAM_TIMEOUT where it is shorter (app.py's `read_timeout`). The third
party answers each call the delay later, plus the incident's extra if the call arrived during
it (slow_api/app.py), and logs it then, whether or not anybody still waits (its calls log).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from playground.predict.clock import Clock, Process
from playground.predict.system import UPSTREAM_GRACE_S, System

#: stamina.retry_context's backoff as the app calls it (wait_initial=0.1, wait_max=1.0, and
#: stamina's own wait_jitter=1.0, wait_exp_base=2): min(max, initial x 2^(n-1) + U(0, jitter)).
RETRY_WAIT_INITIAL_S = 0.1
RETRY_WAIT_MAX_S = 1.0
RETRY_JITTER_S = 1.0

OK, DEGRADED, REFUSED, TIMED_OUT = 200, "degraded", 503, 504


class RetryBudget:
    """remedies.RetryBudget: `ratio` of the requests plus `per_s` a second, one per process."""

    def __init__(self, *, ratio: float, per_s: float, now: float) -> None:
        self.ratio, self.per_s = ratio, per_s
        self.deposits, self.free, self.last = 0.0, per_s, now

    def request(self) -> None:
        self.deposits = min(self.deposits + self.ratio, 10 * self.ratio + self.per_s)

    def allow(self, now: float) -> bool:
        self.free = min(self.per_s, self.free + (now - self.last) * self.per_s)
        self.last = now
        if self.free >= 1 - 1e-9:
            self.free -= 1
            return True
        if self.deposits >= 1 - 1e-9:
            self.deposits -= 1
            return True
        return False


class Breaker:
    """circuitbreaker 2.1.3's CircuitBreaker, one per process: open after `failures` failures
    in a row, for `reset_s`; then every call goes through until one succeeds (closed) or fails
    (open again). A call that started before it opened still counts when it ends."""

    def __init__(self, *, failures: int, reset_s: float) -> None:
        self.threshold, self.reset_s = failures, reset_s
        self.count, self.is_open, self.opened = 0, False, 0.0

    def refuses(self, now: float) -> bool:
        return self.is_open and now < self.opened + self.reset_s

    def result(self, ok: bool, now: float) -> None:
        if ok:
            self.count, self.is_open = 0, False
            return
        self.count += 1
        if self.count >= self.threshold:
            self.is_open, self.opened = True, now


@dataclass
class Call:
    """One call the third party answered (its calls log), and when the app stopped waiting."""

    request_id: str
    arrived: float
    answered: float


@dataclass
class Worker:
    """A process of the app: when its GIL is next free (one thread of Python at a time), and
    what its remedies keep per process."""

    breaker: Breaker | None
    budget: RetryBudget | None
    gil_free: float = 0.0


@dataclass
class App:
    clock: Clock
    system: System
    delay: float  # the delay the users ask for
    took: Callable[[float], float]  # the third party's time for a call arriving then
    rng: random.Random
    calls: list[Call] = field(default_factory=list)
    workers: list[Worker] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.system
        self.workers = [
            Worker(
                breaker=Breaker(failures=s.breaker[0], reset_s=s.breaker[1]) if s.breaker else None,
                budget=RetryBudget(ratio=s.budget[0], per_s=s.budget[1], now=0.0)
                if s.budget
                else None,
            )
            for _ in range(s.workers)
        ]

    def read_timeout(self, asked: float) -> float:
        wait = asked + UPSTREAM_GRACE_S
        limit = self.system.upstream_timeout
        return wait if limit is None else min(wait, limit)

    def _call(self, rid: str, asked: float) -> Generator[float, None, bool]:
        """One call asking for `asked` seconds: True if the answer came within the read
        timeout. The third party takes what it takes for the users' delay, less the
        difference (a health check asks for none: the incident's extra alone), and never
        less than nothing."""
        now = self.clock.now
        took = max(0.0, self.took(now) - self.delay + asked)
        timeout = self.read_timeout(asked)
        self.calls.append(Call(rid, now, now + took))
        yield min(took, timeout)
        return took <= timeout

    def respond(
        self, rid: str, *, waited_since: float, worker: int, asked: float | None = None
    ) -> Process:
        """The app's answer to one request asking for `asked` seconds (by default the users'
        delay): a status, or DEGRADED (the breaker's lesser page)."""
        w, clock, s = self.workers[worker], self.clock, self.system
        if s.turn_beyond_s is not None and s.turn_beyond_s > s.cpu_s:
            # The thread's time between two views and its waits for the GIL (measured).
            yield s.turn_beyond_s - s.cpu_s
        # The request's Python, after whatever Python the process has yet to run (FIFO).
        w.gil_free = max(clock.now, w.gil_free) + s.cpu_s
        yield w.gil_free - clock.now
        if s.deadline is not None and clock.now - waited_since > s.deadline:
            return REFUSED
        if w.budget is not None:
            w.budget.request()
        for n in range(1, s.retries + 1):
            if n > 1:
                backoff = RETRY_WAIT_INITIAL_S * 2 ** (n - 2) + self.rng.uniform(0, RETRY_JITTER_S)
                yield min(RETRY_WAIT_MAX_S, backoff)
                if w.budget is not None and not w.budget.allow(clock.now):
                    return REFUSED
            if w.breaker is not None and w.breaker.refuses(clock.now):
                return DEGRADED
            ok = yield from self._call(rid, self.delay if asked is None else asked)
            if w.breaker is not None:
                w.breaker.result(ok, clock.now)
            if ok:
                return OK
        return TIMED_OUT

"""Remedies for a thread pool under a slow third party, each off unless its variable is set.

The compose overrides under story/remedies/ set them (docs/story.md): the app itself stays the
tutorial's, and `app.py` asks this module for the one call it makes.

- UPSTREAM_TIMEOUT=S: the call gives up after S seconds (requests waits for as long as the
  server does unless given a timeout; the tutorial's app passes none).
- DEADLINE=S: a request that has waited S seconds already, by nginx's X-Request-Start, is
  refused without calling the third party: its user has gone.
- CIRCUIT_BREAKER=FAILURES:RESET_S (circuitbreaker): after FAILURES calls in a row fail, stop
  calling for RESET_S seconds and answer a degraded page at once.
- RETRIES=N (stamina): up to N attempts, with exponential backoff and jitter.
- RETRY_BUDGET=RATIO:PER_S: retries only while the budget allows, as Finagle's default does
  (20% of requests plus 10 a second): a retry storm cannot multiply the load on a third party
  that is already slow.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any

import requests

# circuitbreaker and stamina are imported only when their remedy is on: the images that serve this
# app unchanged without them (the 2026 contenders) need nothing more than this file.


def _seconds(name: str) -> float | None:
    value = os.environ.get(name)
    return float(value) if value else None


def _pair(name: str) -> tuple[float, float] | None:
    value = os.environ.get(name)
    if not value:
        return None
    first, _, second = value.partition(":")
    return float(first), float(second)


UPSTREAM_TIMEOUT_S = _seconds("UPSTREAM_TIMEOUT")
DEADLINE_S = _seconds("DEADLINE")
RETRIES = int(os.environ.get("RETRIES") or "1")


class Degraded(Exception):
    """The third party is not called (the breaker is open): the app serves a lesser page."""


class BudgetSpent(Exception):
    """A retry the budget does not allow: the failure that asked for it stands."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class RetryBudget:
    """Retries allowed: `ratio` of the requests, plus `per_s` a second, whatever happens.
    Each request deposits `ratio` of a retry (up to a few seconds' worth), each retry takes one."""

    def __init__(self, *, ratio: float, per_s: float, clock: Callable[[], float] = time.monotonic):
        self.ratio, self.per_s, self.clock = ratio, per_s, clock
        self.deposits = 0.0
        self.free = per_s
        self.last = clock()
        self.lock = threading.Lock()

    def request(self) -> None:
        with self.lock:
            self.deposits = min(self.deposits + self.ratio, 10 * self.ratio + self.per_s)

    def allow(self) -> bool:
        with self.lock:
            now = self.clock()
            self.free = min(self.per_s, self.free + (now - self.last) * self.per_s)
            self.last = now
            # (A whisker below one counts: ten deposits of 0.2 make 1.9999999999999998.)
            if self.free >= 1 - 1e-9:
                self.free -= 1
                return True
            if self.deposits >= 1 - 1e-9:
                self.deposits -= 1
                return True
            return False


BREAKER_SETTINGS = _pair("CIRCUIT_BREAKER")


@cache
def breaker() -> Any:
    """The process's one circuit breaker. circuitbreaker counts failures without a lock held
    around the call; pybreaker 1.4.1 holds its lock for the whole call, so every call through
    one breaker waits for the one before (its issue #3): measured through the incident, one
    call to the third party at a time per process, the pool's 64 threads idle behind it."""
    from circuitbreaker import CircuitBreaker

    assert BREAKER_SETTINGS is not None
    failures, reset_s = BREAKER_SETTINGS
    return CircuitBreaker(
        failure_threshold=int(failures),
        recovery_timeout=reset_s,
        expected_exception=Exception,
        name="third party",
    )


_budget_settings = _pair("RETRY_BUDGET")
BUDGET = (
    RetryBudget(ratio=_budget_settings[0], per_s=_budget_settings[1]) if _budget_settings else None
)


def _retryable(exc: Exception) -> bool:
    """What a retry might fix: no answer in time, no connection, or a 5xx."""
    if isinstance(exc, requests.HTTPError):
        return exc.response is not None and exc.response.status_code >= 500
    return isinstance(exc, requests.Timeout | requests.ConnectionError)


def call(fn: Callable[[], str]) -> str:
    """`fn` (the call to the third party) as the remedies set here say: through the breaker,
    retried within the budget. Raises what `fn` raises, Degraded, or BudgetSpent."""
    if BUDGET is not None:
        BUDGET.request()

    def once() -> str:
        if BREAKER_SETTINGS is None:
            return fn()
        from circuitbreaker import CircuitBreakerError

        try:
            # Called through the decorator: it refuses at once while the breaker is open.
            result: str = breaker()(fn)()
        except CircuitBreakerError as exc:
            raise Degraded(str(exc)) from None
        return result

    if RETRIES <= 1:
        return once()
    import stamina

    last: Exception | None = None
    for attempt in stamina.retry_context(
        on=_retryable, attempts=RETRIES, wait_initial=0.1, wait_max=1.0, timeout=None
    ):
        with attempt:
            if attempt.num > 1 and BUDGET is not None and not BUDGET.allow():
                raise BudgetSpent(last) if last else RuntimeError("no failure to retry")
            try:
                return once()
            except Exception as exc:
                last = exc
                raise
    raise RuntimeError("stamina made no attempt")  # pragma: no cover - attempts >= 1

"""The app's remedies for a slow third party (flask_app/remedies.py), each switched on as its
compose override does, against the real slow_api on 127.0.0.1."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.conftest import load_module
from tests.unit.conftest import serve_slow_api


@pytest.fixture(scope="module")
def upstream() -> Iterator[int]:
    with serve_slow_api("remedies_slow_api") as port:
        yield port


@pytest.fixture
def app(upstream, monkeypatch):
    """The Flask app pointed at the slow API, every remedy off until a test turns one on."""
    module = load_module("remedies_flask_app", "flask_app/app.py")
    monkeypatch.setattr(module, "API_URL", f"http://127.0.0.1:{upstream}/")
    module.remedies.breaker.cache_clear()
    yield module
    module.remedies.breaker.cache_clear()


def arrived(port: int) -> int:
    """Calls that have reached slow_api so far, answered or still waiting there (its own
    counts): a call is counted the moment it arrives, so nothing needs waiting for."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/control/stats", timeout=5) as r:
        stats = json.load(r)
    return int(stats["served"]) + int(stats["in_flight"])


def test_an_open_breaker_answers_a_lesser_page_at_once_without_calling(app, upstream, monkeypatch):
    """Two timeouts in a row open the breaker: the next user gets a page marked degraded in
    milliseconds, and the third party is not called for it."""
    monkeypatch.setattr(app, "UPSTREAM_TIMEOUT_S", 0.2)
    monkeypatch.setattr(app.remedies, "BREAKER_SETTINGS", (2.0, 30.0))
    client = app.app.test_client()
    statuses = [client.get("/?delay=1").status_code for _ in range(2)]
    assert statuses[0] == 504  # the first failure goes through as it is
    before = arrived(upstream)  # the two that timed out have reached it (0.2 s each)
    started = time.monotonic()
    resp = client.get("/?delay=1")
    took = time.monotonic() - started
    assert resp.status_code == 200 and resp.headers["X-Degraded"] == "circuit-open"
    # Sooner than a call could have failed (its timeout), and no call reached the third party.
    assert "unavailable" in resp.get_data(as_text=True) and took < app.UPSTREAM_TIMEOUT_S
    assert arrived(upstream) == before


def test_calls_through_a_closed_breaker_run_at_once(app, upstream, monkeypatch):
    """A breaker must not serialise the calls it watches: 8 threads each calling a 0.5 s third
    party through it finish in about 0.5 s, not 4 s (pybreaker 1.4.1 holds its lock during
    the call: this took 4 s with it)."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(app, "UPSTREAM_TIMEOUT_S", 3.0)
    monkeypatch.setattr(app.remedies, "BREAKER_SETTINGS", (5.0, 10.0))
    client = app.app.test_client
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: client().get("/?delay=0.5").status_code, range(8)))
    took = time.monotonic() - started
    assert codes == [200] * 8
    assert took < 2.0, f"8 calls of 0.5 s through the breaker took {took:.1f} s: serialised"


def test_retries_try_again_with_backoff(app, upstream, monkeypatch):
    monkeypatch.setattr(app, "UPSTREAM_TIMEOUT_S", 0.2)
    monkeypatch.setattr(app.remedies, "RETRIES", 3)
    before = arrived(upstream)
    started = time.monotonic()
    resp = app.app.test_client().get("/?delay=1")
    assert resp.status_code == 504
    # Three calls of 0.2 s with waits between them (from 0.1 s, with jitter).
    assert time.monotonic() - started >= 0.6
    assert arrived(upstream) == before + 3


def test_a_spent_budget_stops_the_retries(app, upstream, monkeypatch):
    monkeypatch.setattr(app, "UPSTREAM_TIMEOUT_S", 0.2)
    monkeypatch.setattr(app.remedies, "RETRIES", 3)
    monkeypatch.setattr(app.remedies, "BUDGET", app.remedies.RetryBudget(ratio=0, per_s=0))
    before = arrived(upstream)
    resp = app.app.test_client().get("/?delay=1")
    assert resp.status_code == 503 and "retry budget is spent" in resp.get_data(as_text=True)
    assert arrived(upstream) == before + 1


def test_the_budget_allows_a_share_of_the_requests_plus_a_floor_per_second():
    module = load_module("remedies_module", "flask_app/remedies.py")
    now = [0.0]
    budget = module.RetryBudget(ratio=0.2, per_s=1, clock=lambda: now[0])
    assert budget.allow() and not budget.allow()  # the floor: one a second
    for _ in range(10):
        budget.request()  # ten requests deposit two retries
    assert budget.allow() and budget.allow() and not budget.allow()
    now[0] += 1.0
    assert budget.allow()  # a second later, the floor again

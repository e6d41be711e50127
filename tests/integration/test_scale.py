"""A reduced scale sweep (c = 50, 500, 2000): gevent keeps scaling with a flat OS-thread
count, a thread-per-request pool plateaus at its thread count and stops scaling. The run
(conftest.scale_sweep) is shared with test_scale_failures.py."""

from __future__ import annotations

import pytest

from tests.integration.conftest import SCALE_SWEEP as SWEEP

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sweep(scale_sweep) -> dict:
    return scale_sweep


def entries(data: dict, name: str) -> dict[int, dict]:
    return {e["concurrency"]: e for e in data["scenarios"] if e["name"] == name}


def test_delays_come_from_a_measured_cpu_cost(sweep):
    scale = sweep["settings"]["scale"]
    assert scale["cpu_ms_per_request"] > 0
    delays = {int(c): d for c, d in scale["delays"].items()}
    # The ideal c / delay stays within what one core can serve at every concurrency.
    for c, d in delays.items():
        assert c / d <= scale["rate"] * 1.01 or d == 1.0
    assert delays[2000] > delays[50]


def test_gevent_keeps_scaling_with_a_flat_thread_count(sweep):
    gevent = entries(sweep, "uwsgi-gevent")
    assert sorted(gevent) == list(SWEEP)
    for c, e in gevent.items():
        assert e["valid"], (c, e["invalid_reasons"])
        assert e["efficiency"] >= 0.7, (c, e["efficiency"])
        assert e["threads_peak"] <= 30, (c, e["threads_peak"])
    assert gevent[2000]["threads_peak"] - gevent[50]["threads_peak"] <= 15


def test_threads_plateau_at_the_pool_size_and_stop_scaling(sweep):
    threads = entries(sweep, "gunicorn-threads")
    # An efficiency is a finding only from a valid entry (no errors, a load generator with room).
    for c in (50, 500):
        assert threads[c]["valid"], (c, threads[c]["invalid_reasons"], threads[c]["notes"])
    assert threads[50]["efficiency"] >= 0.7
    at_500 = threads[500]
    # 4 workers x 50 threads: no more than 200 requests in flight, whatever c is.
    assert 150 <= at_500["threads_peak"] <= 4 * 50 + 15, at_500["threads_peak"]
    assert at_500["efficiency"] < 0.6, at_500["efficiency"]
    # Past that point the sweep does not spend minutes proving it again.
    assert threads[2000].get("skipped") is True
    assert "stopped scaling at c=500" in threads[2000]["error"]
    assert sweep["probe"]["kind"] == "probe"
    assert all(e["kind"] != "probe" for e in sweep["scenarios"])
    for e in sweep["scenarios"]:
        if not e.get("error"):
            assert e["rss_per_request_kb"] is not None

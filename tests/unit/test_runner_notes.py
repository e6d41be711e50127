"""The diagnosis of a shortfall: lockstep waves queueing behind CPU."""

from __future__ import annotations

from playground.load import LoadResult
from playground.diagnosis import lockstep_waves


def result(p50_ms: float) -> LoadResult:
    return LoadResult(tool="ab", complete=2000, failed=0, failures={}, non_2xx=0,
                      time_taken_s=12.0, rps=160.0,
                      latency_ms={"p50": p50_ms, "p90": p50_ms, "p99": p50_ms, "max": p50_ms},
                      connect_max_ms=3.0, steady_rps=180.0, mean_latency_ms=p50_ms)


ROWS = [{"t": 0, "threads": 11, "processes": 1, "rss_mb": 50.0, "cpu_pct": 40.0}]


def test_a_wave_queueing_behind_cpu_is_explained():
    findings = lockstep_waves(result=result(1085), delay=1.0, concurrency=200, cpu_ms=1.26,
                              samples=ROWS, steady=183.0, ideal=200.0)
    assert [f.code for f in findings] == ["lockstep-waves"]
    assert "a wave of 200 requests costs 252 ms" in findings[0].message
    assert findings[0].figures["wave_cpu_ms"] == 252.0


def test_no_wave_note_when_the_run_kept_up():
    assert lockstep_waves(result=result(1009), delay=1.0, concurrency=200, cpu_ms=1.4,
                          samples=ROWS, steady=196.0, ideal=200.0) == []


def test_no_wave_note_for_a_serialised_server():
    # 5 requests x 4 ms of CPU cannot explain 4 s of queueing: that is one-at-a-time serving.
    assert lockstep_waves(result=result(5072), delay=1.0, concurrency=5, cpu_ms=4.0,
                          samples=ROWS, steady=1.4, ideal=5.0) == []


def test_a_scale_load_runs_enough_rounds_for_a_steady_figure():
    """A long delay still gets MIN_STEADY_ROUNDS rounds (one would show no steady figure)."""
    from playground.diagnosis import MIN_STEADY_ROUNDS, MIN_STEADY_WAVES
    from playground.runner import Plan
    from playground.scenarios import REGISTRY

    target = REGISTRY["uwsgi-gevent"]
    plan = Plan(targets=(target,), sweep=(100, 10000), delays=((100, 0.5), (10000, 52.0)))
    short, long = plan.loads(target)
    assert short.requests == 20 * 100  # ~10 s of 0.5-s rounds
    assert long.requests == MIN_STEADY_ROUNDS * 10000
    assert MIN_STEADY_ROUNDS + 1 > MIN_STEADY_WAVES  # ab's lone first request adds one

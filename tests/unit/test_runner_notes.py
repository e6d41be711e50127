"""The runner's own diagnosis of a shortfall: lockstep waves queueing behind CPU."""

from __future__ import annotations

from dataclasses import replace

from playground.load import LoadResult
from playground.runner import Runner
from playground.scenarios import REGISTRY


def result(p50_ms: float) -> LoadResult:
    return LoadResult(tool="ab", complete=2000, failed=0, failures={}, non_2xx=0,
                      time_taken_s=12.0, rps=160.0,
                      latency_ms={"p50": p50_ms, "p90": p50_ms, "p99": p50_ms, "max": p50_ms},
                      connect_max_ms=3.0, steady_rps=180.0, mean_latency_ms=p50_ms)


ROWS = [{"t": 0, "threads": 11, "processes": 1, "rss_mb": 50.0, "cpu_pct": 40.0}]


def test_a_wave_queueing_behind_cpu_is_explained():
    target = REGISTRY["gevent-pywsgi"]
    notes = Runner._wave_note(target, result(1085), cpu_ms=1.26, during=ROWS, steady=183.0,
                              ideal=200.0)
    assert len(notes) == 1 and "a wave of 200 requests costs 252 ms" in notes[0]


def test_no_wave_note_when_the_run_kept_up():
    target = REGISTRY["uwsgi-gevent"]
    assert Runner._wave_note(target, result(1009), cpu_ms=1.4, during=ROWS, steady=196.0,
                             ideal=200.0) == []


def test_no_wave_note_for_a_serialised_server():
    # 5 requests x 4 ms of CPU cannot explain 4 s of queueing: that is one-at-a-time serving.
    target = replace(REGISTRY["devserver"])
    assert Runner._wave_note(target, result(5072), cpu_ms=4.0, during=ROWS, steady=1.4,
                             ideal=5.0) == []

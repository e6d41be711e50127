"""The diagnosis of a shortfall: lockstep waves queueing behind CPU."""

from __future__ import annotations

from playground.bench.diagnosis import lockstep_waves
from playground.core.results import Sample
from playground.core.tools.output import LoadResult


def result(p50_ms: float) -> LoadResult:
    return LoadResult(
        tool="ab",
        complete=2000,
        failed=0,
        failures={},
        non_2xx=0,
        time_taken_s=12.0,
        rps=160.0,
        latency_ms={"p50": p50_ms, "p90": p50_ms, "p99": p50_ms, "max": p50_ms},
        connect_max_ms=3.0,
        steady_rps=180.0,
        mean_latency_ms=p50_ms,
    )


ROWS = [Sample(t=0, threads=11, processes=1, rss_mb=50.0, cpu_pct=40.0)]


def test_a_wave_queueing_behind_cpu_is_explained():
    findings = lockstep_waves(
        result=result(1085),
        delay=1.0,
        concurrency=200,
        cpu_ms=1.26,
        samples=ROWS,
        steady=183.0,
        ideal=200.0,
    )
    assert [f.code for f in findings] == ["lockstep-waves"]
    assert "a wave of 200 requests costs 252 ms" in findings[0].message
    assert findings[0].figures["wave_cpu_ms"] == 252.0


def test_no_wave_note_when_the_run_kept_up():
    assert (
        lockstep_waves(
            result=result(1009),
            delay=1.0,
            concurrency=200,
            cpu_ms=1.4,
            samples=ROWS,
            steady=196.0,
            ideal=200.0,
        )
        == []
    )


def test_no_wave_note_for_a_serialised_server():
    # 5 requests x 4 ms of CPU cannot explain 4 s of queueing: that is one-at-a-time serving.
    assert (
        lockstep_waves(
            result=result(5072),
            delay=1.0,
            concurrency=5,
            cpu_ms=4.0,
            samples=ROWS,
            steady=1.4,
            ideal=5.0,
        )
        == []
    )


def test_a_scale_load_runs_enough_rounds_for_a_steady_figure():
    """A long delay still gets MIN_STEADY_ROUNDS rounds (one would show no steady figure)."""
    from playground.bench.diagnosis import MIN_STEADY_ROUNDS
    from playground.bench.plan import Plan
    from playground.core.scenarios import REGISTRY
    from playground.core.verdicts import MIN_STEADY_WAVES

    target = REGISTRY["uwsgi-gevent"]
    plan = Plan(targets=(target,), sweep=(100, 10000), delays=((100, 0.5), (10000, 52.0)))
    short, long = plan.loads(target)
    # ~10 s of 0.5-s rounds; + 1 for ab's lone first request, so no connection is left over
    assert short.requests == 20 * 100 + 1
    assert long.requests == MIN_STEADY_ROUNDS * 10000 + 1
    assert MIN_STEADY_ROUNDS + 1 > MIN_STEADY_WAVES  # ab's lone first request adds one


def test_a_target_of_its_own_sweep_runs_only_at_its_concurrencies():
    """scale's NAME@C,...: that target at its own concurrencies, the others at the sweep."""
    from playground.bench.plan import Plan
    from playground.core.scenarios import REGISTRY

    curve, point = REGISTRY["uwsgi-gevent"], REGISTRY["nginx-uwsgi"]
    plan = Plan(
        targets=(curve, point),
        sweep=(50, 2000),
        sweeps=(("nginx-uwsgi", (2000,)),),
        delays=((50, 1.0), (2000, 6.0)),
    )
    assert [t.concurrency for t in plan.loads(curve)] == [50, 2000]
    assert [(t.concurrency, t.delay) for t in plan.loads(point)] == [(2000, 6.0)]


def test_the_runner_builds_a_typed_entry_with_findings_from_a_real_capture(tmp_path):
    """The serial dev server's recorded ab output, through Runner._entry: no steady figure,
    the measured rate, structured findings whose messages are also the notes."""
    import json
    from pathlib import Path

    from playground.bench.entry import Measured
    from playground.bench.plan import Plan
    from playground.bench.runner import Runner
    from playground.bench.steady import parse_timeline
    from playground.core.compose import Docker
    from playground.core.load import TOOLS
    from playground.core.results import Entry, Run
    from playground.core.runstore import RunStore
    from playground.core.sampling import Sample, Series
    from playground.core.scenarios import REGISTRY

    data = Path(__file__).resolve().parents[1] / "data"
    tsv = (data / "ab_devserver_serial_n10_c5_1s.tsv").read_text()
    result = TOOLS["ab"].parse(
        stdout=(data / "ab_devserver_serial_n10_c5_1s.txt").read_text(),
        per_request=tsv,
        concurrency=5,
    )
    during = Series(
        "flask_app",
        [Sample(t=i / 2, threads=1, processes=1, rss_mb=40.0, cpu_pct=2.0) for i in range(21)],
    )
    before = Series("flask_app", [Sample(t=0.0, threads=1, processes=1, rss_mb=39.0, cpu_pct=0.0)])
    repeat = Measured(
        result=result,
        timeline=parse_timeline(tsv),
        series={"flask_app": during},
        before={"flask_app": before},
        loadgen_cpu=3.0,
    )
    target = REGISTRY["devserver"]
    store = RunStore.create_run(results_dir=tmp_path, run=Run(run_id="r"))
    runner = Runner(docker=Docker(root=tmp_path), store=store, plan=Plan(targets=(target,)))
    entry = runner._entry(target, [repeat], restarts={}, network="sync-devserver_default")
    assert entry.steady_rps is None and entry.efficiency is None
    assert entry.rps == result.rps and 0.9 <= entry.rps <= 1.05
    assert [f.code for f in entry.findings] == ["queued", "no-steady-state"]
    assert entry.notes == [f.message for f in entry.findings]
    assert entry.rss_per_request_kb == (40.0 - 39.0) * 1024 / 5
    assert len(entry.latency_distribution_ms) > 5 and entry.samples[0] == Sample(
        0.0, 1, 1, 40.0, 2.0
    )
    runner._keep(entry)
    assert Entry.from_json(json.loads(store.path.read_text())["scenarios"][0]) == entry

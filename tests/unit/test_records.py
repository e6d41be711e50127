"""Every kind's compact run record (docs/runs/): a bench, a scale, a fault run, a prediction and a
by-hand story run written by `playground record` from results kept as the runs wrote them,
shown back by `record --show` and `report --record`, with nothing that names the machine; the
committed records read back to the same bytes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from playground import cli
from playground.commands import kinds
from playground.core import records
from playground.core.jsonmodel import to_json
from playground.core.results import Environment, Run, ScaleRunSettings, ScaleSettings
from playground.core.runstore import RunStore
from playground.core.scenarios import REGISTRY
from playground.faults.results import (
    AbFigures,
    AbOutcome,
    Aftermath,
    FaultFailed,
    FaultFindings,
    FaultRan,
    FaultRunSettings,
    FaultsRun,
    OutageVerdict,
    OverloadVerdict,
    PhaseStats,
    Probed,
    SlowdownVerdict,
)
from playground.incident.outside import OutsideTarget

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
#: What names the machine, put into each run before it is recorded.
KERNEL = "6.1.0-41-cloud-amd64"
HOST = "ci-runner-17"
MACHINE_PATH = "/tmp/pytest-results-dir/abc"


def _machine(env: Environment | None) -> Environment:
    return replace(
        env or Environment(cpu_count=2),
        kernel=KERNEL,
        platform=f"Linux-{KERNEL}-x86_64-with-glibc2.36",
        hostname=HOST,
    )


def _keep(results_dir: Path, run: Any) -> Path:
    run.environment = _machine(run.environment)
    run.command = f"{run.command or 'playground'} --results-dir {MACHINE_PATH}"
    store = RunStore.create_run(results_dir=results_dir, run=run)
    store.save()
    return store.path


def _bench(tmp_path: Path) -> Path:
    return _keep(
        tmp_path / "results",
        Run.from_json(json.loads((DATA / "results_recorded.json").read_text())),
    )


def _scale(tmp_path: Path) -> Path:
    """The sweep fixture as a scale run: its settings with the probe's choice, devserver-threads
    at c=10 its probe."""
    run = Run.from_json(json.loads((DATA / "results_sweep.json").read_text()))
    chosen = ScaleSettings(probe="devserver-threads", cpu_ms_per_request=2.0, rate=125.0)
    run.settings = ScaleRunSettings(sweep=[10, 50], scale=chosen)
    run.kind = "scale"
    run.set_probe("devserver-threads")
    run.run_id = "20261123-121127"
    return _keep(tmp_path / "results", run)


PROBED = Probed.of(REGISTRY["gunicorn-threads"], clients=20, delay=1.0)
PHASES = {
    p: PhaseStats(requests=10, kinds={"200": 10}, p50_s=s)
    for p, s in (("before", 1.01), ("slow", 5.2), ("after", 1.02))
}


def _faults(tmp_path: Path) -> Path:
    """A fault run of each fault's verdict, as faults/run.py stores them, and a fault that could
    not run."""
    slow = SlowdownVerdict(
        probed=PROBED,
        slow_delay=5.0,
        requests=30,
        kinds={"200": 30},
        phases=PHASES,
        settle_s=3.5,
        aftermath=Aftermath(stuck=True, problems=["capacity was lost: 1.2 s before, 6.0 s after"]),
    )
    outage = OutageVerdict(
        probed=PROBED,
        requests=12,
        kinds={"200": 8, "502": 4},
        longest_while_down_s=0.031,
        answer_bound_s=6.0,
        recover_s=0.5,
    )
    figures = AbFigures(complete=4000, failed=12, rps=812.5, latency_ms={"p99": 2400.0})
    overload = OverloadVerdict(
        probed=PROBED,
        ab=AbOutcome(figures=figures),
        probe=PhaseStats(kinds={"200": 9}, p50_s=1.4),
        drain_s=0.8,
        drain_answer="200",
    )
    run = FaultsRun(
        run_id="20261126-000000-faults",
        started_at="2026-11-26T00:00:00+0000",
        command="playground faults --fault upstream-slowdown",
        settings=FaultRunSettings(faults=["upstream-slowdown", "upstream-outage", "overload"]),
    )
    for fault, verdict in (
        ("upstream-slowdown", slow),
        ("upstream-outage", outage),
        ("overload", overload),
    ):
        run.add(
            FaultRan.of(
                FaultFindings(fault=fault, targets=[verdict]),
                compose_file=("sync-gunicorn.yml",),
                started_at="t",
                marks=[],
                commands=[],
            )
        )
    failed = FaultFailed.of(
        fault="db-outage",
        compose_file=("bonus.yml",),
        targets=(),
        error=f"no such file {MACHINE_PATH}/x",
    )
    run.add(failed)
    return _keep(tmp_path / "results", run)


def _predict(tmp_path: Path) -> Path:
    results = tmp_path / "predicted"
    argv = ["predict", "--results-dir", str(results), "--draws", "3", "--rate", "50"]
    assert cli.main([*argv, "uwsgi-threads"]) == 0
    (path,) = [p for p in results.glob("*/results.json") if not p.parent.is_symlink()]
    run = kinds.load_run(path)
    run.run_id += "x"  # a second store beside the first
    return _keep(results, run)


def _by_url(tmp_path: Path) -> Path:
    """The recorded story run as `playground story --url` keeps one: each target measured by its
    URL (docs/your-service.md)."""
    run = kinds.load_run(DATA / "story_results_recorded.json")
    for target in run.targets:
        target.outside = OutsideTarget(
            url="http://10.0.0.5:8080/", network="host", mechanism="by-hand"
        )
    return _keep(tmp_path / "results", run)


MAKERS = {
    "bench": _bench,
    "scale": _scale,
    "faults": _faults,
    "predict": _predict,
    "story": _by_url,
}


def _record(tmp_path: Path, maker: str, *extra: str) -> Path:
    out = tmp_path / "runs"
    assert cli.main(["record", str(MAKERS[maker](tmp_path)), "--out", str(out), *extra]) == 0
    (path,) = out.glob("*.json")
    return path


def _load(path: Path) -> Any:
    return kinds.load_record(path)


def test_a_bench_record_keeps_each_entrys_figures_verdict_and_the_tools_versions(
    tmp_path: Path,
) -> None:
    record = _load(_record(tmp_path, "bench", "--machine", "2-core, 24 GiB"))
    assert (record.kind, record.run_id, record.machine) == (
        "bench",
        "20261123-120912",
        "2-core, 24 GiB",
    )
    assert record.settings["repeat"] == 2 and record.settings["tool"] == "ab"
    calibration, *_, pywsgi = record.entries
    assert calibration.part == "calibration" and pywsgi.name == "gevent-pywsgi"
    assert pywsgi.rps == pytest.approx(154.17) and pywsgi.steady_rps == pytest.approx(174.98)
    assert pywsgi.latency_ms["p99"] == pytest.approx(1344) and pywsgi.threads_peak == 11
    assert pywsgi.rss_peak_mb == pytest.approx(57.6) and pywsgi.cpu_peak_pct == pytest.approx(55.9)
    assert pywsgi.valid and pywsgi.shape == "concurrent" and pywsgi.repeats == 2
    env = record.environment
    assert (env.load_tool, env.load_tool_version, env.docker_version) == (
        "ab",
        "2.3",
        "20.10.24+dfsg1",
    )
    assert env.packages["gevent"] == "26.9.0"


def test_a_scale_record_keeps_each_point_and_the_probe(tmp_path: Path) -> None:
    record = _load(_record(tmp_path, "scale"))
    assert record.kind == "scale" and record.settings["scale"]["probe"] == "devserver-threads"
    points = {(e.name, e.concurrency): e for e in record.entries}
    assert ("gevent-pywsgi", 50) in points and ("gevent-pywsgi", 10) in points
    assert [e.part for e in record.entries].count("probe") == 1
    assert all(e.keeps_scaling is not None for e in record.entries if e.part == "scenario")


def test_a_faults_record_keeps_each_verdict_and_its_figures(tmp_path: Path) -> None:
    record = _load(_record(tmp_path, "faults"))
    rows = {r.fault: r for r in record.targets}
    slow, outage, overload = rows["upstream-slowdown"], rows["upstream-outage"], rows["overload"]
    assert slow.verdict.startswith("capacity was lost") and slow.stuck is True
    assert slow.figures["p50_slow_s"] == pytest.approx(5.2) and slow.figures["settle_s"] == 3.5
    assert outage.verdict == "ok" and outage.kinds == {"200": 8, "502": 4}
    assert outage.figures["recover_s"] == 0.5
    assert overload.requests == 4000 and overload.figures["ab_p99_ms"] == 2400.0
    assert (
        rows["db-outage"].verdict == "could not run" and rows["db-outage"].error == "no such file x"
    )


def test_a_prediction_record_keeps_its_seeds_draws_and_odds(tmp_path: Path) -> None:
    record = _load(_record(tmp_path, "predict"))
    assert record.kind == "predict" and record.settings["seed"] == 1
    assert record.settings["rate"] == 50
    (target,) = record.targets
    assert target.name == "uwsgi-threads" and target.draws == 3
    assert target.held + target.collapsed + target.not_recovered == 3
    assert target.verdict in ("held", "collapsed", "collapsed and did not recover")


def test_a_delay_sweeps_record_keeps_each_pool_at_each_delay() -> None:
    """`playground predict --sweep delay`: the page cites where each pool tips, so the record
    keeps every pool's verdict at every delay."""
    from playground.incident import predictrecord
    from playground.incident.storyresults import Cliff, CliffTarget, DelayStep, StoryRun

    steps = [
        DelayStep(incident_delay=2.13, held=True, recovered=True, visits_served_during=1.0),
        DelayStep(incident_delay=2.35, held=False, recovered=False, visits_served_during=0.61),
    ]
    run = StoryRun(
        run_id="20260101-000000-predict",
        kind="predict",
        cliff=Cliff(targets=[CliffTarget(name="story-uwsgi-threads", delays=steps)]),
    )
    record = predictrecord.from_run(run, machine="m")
    assert [(d.name, d.incident_delay, d.held, d.recovered) for d in record.delays] == [
        ("uwsgi-threads", 2.13, True, True),
        ("uwsgi-threads", 2.35, False, False),
    ]
    assert record.delays[1].visits_served_during == 0.61


def test_a_story_run_by_url_records_as_a_story(tmp_path: Path) -> None:
    record = _load(_record(tmp_path, "story"))
    threads = record.target("uwsgi-threads", 1)
    assert record.kind == "story" and threads.verdict == "collapsed and did not recover"
    assert threads.visits_served_during == pytest.approx(0.3626)
    assert record.environment is not None and record.environment.cpu_count == 2


def test_a_story_record_keeps_each_measurements_tries_and_footprint(tmp_path: Path) -> None:
    """What the contenders' page reads of a target beside the users' figures (threads, memory,
    499s, calls for nobody) and how many tries it took, as the results file has them."""
    run = kinds.load_run(DATA / "story_results_recorded.json")
    record = _load(_record(tmp_path, "story"))
    for measured in run.targets:
        kept = record.target(measured.name.removeprefix("story-"), measured.repeat)
        s = measured.summary
        assert s is not None and kept.footprint is not None
        assert kept.tries == 1 + len(measured.invalid_tries)
        assert kept.footprint.threads_before == s.threads_before
        assert kept.footprint.threads_peak == s.peak_threads
        assert kept.footprint.memory_peak_mb == pytest.approx(s.peak_rss_mb, abs=0.05)
        assert kept.footprint.nginx_499 == s.wasted_499
        assert kept.footprint.calls_for_nobody == s.calls_for_nobody
    assert any(t.footprint and t.footprint.nginx_499 for t in record.targets)


@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_a_record_names_no_machine_path_kernel_or_host(
    maker: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _record(tmp_path, maker)
    text = path.read_text()
    for word in (KERNEL, HOST, "/tmp", str(tmp_path), '"kernel"', '"platform"'):
        assert word not in text, word
    assert "--results-dir abc" in text  # the command is kept, the path cut to its last part
    assert records.dumps(_load(path)) == text  # one form: read back, the same bytes
    assert cli.main(["record", "--show", path.stem, "--out", str(path.parent)]) == 0
    shown = capsys.readouterr().out
    assert f"run {path.stem} ({_load(path).kind}, recorded)" in shown


def test_report_shows_a_committed_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", "20261126-220031-story", "--record"]) == 0
    shown = capsys.readouterr().out
    assert "run 20261126-220031-story (story, recorded)" in shown
    assert "gunicorn-threads" in shown and "collapsed" in shown and "57.12" in shown


def test_every_committed_record_reads_back_to_the_same_bytes() -> None:
    paths = sorted(records.RECORDS_DIR.glob("*.json"))
    assert len(paths) >= 40
    for path in paths:
        assert records.dumps(kinds.load_record(path)) == path.read_text(), path.name


def test_every_committed_record_was_written_from_its_runs_results() -> None:
    """The pages' figures rest on kept results: no record is copied from a page's table."""
    found = {p.name: kinds.load_record(p).source for p in records.RECORDS_DIR.glob("*.json")}
    assert found and {name for name, source in found.items() if source != records.RECORDED} == set()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["record", "--show", "20991231-000000-story"], "no record of run '20991231-000000-story'"),
        (["report", "20991231-000000", "--record"], "no record of run"),
        (["record", str(DATA / "reports")], "results.json"),
        (["record", str(DATA / "results_recorded.json"), "--out", "/proc/records"], "cannot write"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_a_record_of_a_kind_no_registry_line_records_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "20261126-000000-sketch.json"
    path.write_text(json.dumps({"run_id": path.stem, "kind": "sketch"}))
    with pytest.raises(records.RecordError, match="not one this version records"):
        kinds.load_record(path)
    assert to_json(records.scrubbed(None)) is None

"""faults/results.py and faults/captured.py: a fault's typed verdicts write the keys faults.json has
always had, in the same order, and read back as the same objects (older files included)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from playground.core.jsonmodel import from_json, to_json
from playground.core.runstore import RunStore
from playground.core.scenarios import REGISTRY
from playground.faults.captured import judged
from playground.faults.results import (
    AbFigures,
    AbOutcome,
    Aftermath,
    Burst,
    ContainerCheck,
    FaultFailed,
    FaultFindings,
    FaultRan,
    FaultRunSettings,
    FaultSettings,
    FaultsRun,
    OutageVerdict,
    OverloadVerdict,
    PhaseStats,
    Probed,
    SlowdownVerdict,
)
from tests.unit.test_faults import ab_result

TARGET = REGISTRY["gunicorn-threads"]
PROBED = Probed.of(TARGET, clients=20, delay=1.0)
BURST = Burst(k=200, delay=1.0, kinds={"200": 200}, seconds=1.2)
PHASE = PhaseStats(from_s=0.0, to_s=5.0, requests=10, kinds={"200": 10}, p50_s=1.0)
CHECK = ContainerCheck("flask_app", "running", 0, False, 5, 4, ((12, "worker"),), ("lost 1",))
AFTER = Aftermath(
    burst_before=BURST,
    burst_after=BURST,
    stuck=False,
    stuck_reason="burst of 200 x 1 s: 1.20 s before, 1.20 s after",
    timeline=[{"t": 0.0, "200": 10}],
    problems=[],
    notes=["n"],
)
HEAD = ["name", "title", "service", "url", "concurrency", "delay"]
TAIL = ["burst_before", "burst_after", "stuck", "stuck_reason", "timeline", "problems", "notes"]


def test_the_start_of_every_record_is_the_target_as_probed_from_the_host() -> None:
    assert list(to_json(PROBED)) == HEAD
    assert PROBED.url == TARGET.host_url(delay=1.0) and PROBED.concurrency == 20


def test_an_outage_verdict_keeps_its_keys_and_order() -> None:
    verdict = OutageVerdict(
        probed=PROBED,
        requests=10,
        kinds={"200": 10},
        phases={"before": PHASE, "during": PHASE},
        longest_while_down_s=0.02,
        answer_bound_s=6.0,
        recover_s=0.4,
        requests_after_return=12,
        aftermath=AFTER,
    )
    data = to_json(verdict)
    own = "requests kinds phases longest_while_down_s answer_bound_s recover_s requests_after_return".split()
    assert list(data) == [*HEAD, *own, *TAIL]
    assert data["phases"]["during"] == to_json(PHASE)
    assert data["burst_before"] == {"k": 200, "delay": 1.0, "kinds": {"200": 200}, "seconds": 1.2}


def test_a_slowdown_verdict_keeps_its_keys_and_order() -> None:
    verdict = SlowdownVerdict(
        probed=PROBED,
        slow_delay=5.0,
        requests=10,
        kinds={"200": 10},
        phases={"before": PHASE, "slow": PHASE, "after": PHASE},
        settle_s=None,
        settle_limit_s=1.5,
        aftermath=AFTER,
    )
    own = "slow_delay requests kinds phases settle_s settle_limit_s".split()
    assert list(to_json(verdict)) == [*HEAD, *own, *TAIL]


def test_an_overload_verdict_writes_abs_figures_or_why_there_were_none() -> None:
    ab = ab_result()
    verdict = OverloadVerdict(
        probed=PROBED,
        ab=AbOutcome(figures=AbFigures.of(ab), exit_code=0, error=None),
        probe=PHASE,
        probe_concurrency=10,
        shed=["nothing shed"],
        drain_s=1.0,
        drain_answer="200",
        aftermath=dataclasses.replace(AFTER, containers={"flask_app": CHECK}),
    )
    data = to_json(verdict)
    assert list(data) == [
        *HEAD,
        "ab",
        "probe",
        "probe_concurrency",
        "shed",
        "drain_s",
        "drain_answer",
        *TAIL[:4],
        "containers",
        *TAIL[4:],
    ]
    assert list(data["ab"]) == [
        "complete",
        "failed",
        "failures",
        "non_2xx",
        "rps",
        "time_taken_s",
        "latency_ms",
        "connect_max_ms",
        "exit_code",
        "error",
    ]
    assert data["containers"]["flask_app"]["lost_processes"] == [[12, "worker"]]
    assert data["ab"]["rps"] == ab.rps and data["ab"]["error"] is None
    failed = dataclasses.replace(
        verdict, ab=AbOutcome(figures=None, exit_code=0, error="no report")
    )
    assert to_json(failed)["ab"] == {"exit_code": 0, "error": "no report"}
    back = from_json(OverloadVerdict, json.loads(json.dumps(data)), "t")
    assert back == verdict and from_json(OverloadVerdict, to_json(failed), "t") == failed


def test_a_fault_record_and_a_failure_as_faults_json_keeps_them() -> None:
    run = FaultFindings(
        fault="upstream-outage",
        stopped_service="slow_api",
        containers={"flask_app": CHECK},
        targets=[],
    )
    record = FaultRan.of(
        run,
        compose_file=("sync-gunicorn.yml", "scale/sync-gunicorn.yml"),
        started_at="2026-11-25T00:00:00+0000",
        marks=[{"t": 1.0, "label": "stop slow_api"}],
        commands=["docker compose -f sync-gunicorn.yml stop slow_api"],
    )
    data = json.loads(json.dumps(to_json(record)))
    assert list(data) == [
        "fault",
        "stopped_service",
        "containers",
        "targets",
        "compose_file",
        "overrides",
        "started_at",
        "marks",
        "commands",
        "error",
    ]
    assert data["compose_file"] == "sync-gunicorn.yml"
    assert data["overrides"] == ["scale/sync-gunicorn.yml"] and data["error"] is None
    failed = FaultFailed.of(
        fault="db-outage",
        compose_file=("bonus-psycopg2-gevent.yml",),
        targets=(TARGET,),
        error="did not become healthy",
    )
    assert to_json(failed) == {
        "fault": "db-outage",
        "compose_file": "bonus-psycopg2-gevent.yml",
        "overrides": [],
        "targets": [{"name": TARGET.name, "title": TARGET.title}],
        "error": "did not become healthy",
    }


def test_the_aftermath_adds_stuck_workers_then_the_containers_problems() -> None:
    slower = Burst(k=200, delay=1.0, kinds={"200": 200}, seconds=4.5)
    found = judged([], BURST, slower, {"flask_app": CHECK}, ["2 x 502"], [])
    assert found.stuck and "capacity lost" in found.stuck_reason
    assert found.problems == ["2 x 502", found.stuck_reason, "lost 1"]
    calm = judged([], BURST, BURST, {}, [], ["n"])
    assert not calm.stuck and calm.problems == [] and calm.notes == ["n"]


def test_a_fault_run_goes_through_the_core_store_and_reads_back_the_same(tmp_path: Path) -> None:
    """faults.json is written by the same store as every run (atomically, whole) and reads back
    as the same typed run: a record of each kind, and a failure, told apart as written."""
    outage = OutageVerdict(
        probed=PROBED,
        requests=10,
        kinds={"200": 10},
        phases={"during": PHASE},
        longest_while_down_s=None,
        answer_bound_s=6.0,
        recover_s=None,
        requests_after_return=0,
        aftermath=AFTER,
    )
    slowdown = SlowdownVerdict(probed=PROBED, slow_delay=5.0, settle_limit_s=1.5, aftermath=AFTER)
    record = FaultRan.of(
        FaultFindings(fault="upstream-outage", containers={"flask_app": CHECK}, targets=[outage]),
        compose_file=("sync-gunicorn.yml",),
        started_at="t",
        marks=[{"t": 1.0, "label": "stop slow_api"}],
        commands=[],
    )
    slow = FaultRan.of(
        FaultFindings(fault="upstream-slowdown", targets=[slowdown]),
        compose_file=("sync-gunicorn.yml",),
        started_at="t",
        marks=[],
        commands=[],
    )
    failed = FaultFailed.of(fault="overload", compose_file=("x.yml",), targets=(TARGET,), error="e")
    store = RunStore.create_run(
        results_dir=tmp_path,
        run=FaultsRun(
            run_id="r-faults",
            settings=FaultRunSettings(faults=["overload"], options=FaultSettings(delay=1)),
        ),
    )
    for r in (record, slow, failed):
        store.run.add(r)
        store.save()
    store.finish()
    assert store.path == tmp_path / "r-faults" / "faults.json"
    assert not (tmp_path / "latest").exists()  # `playground report latest` reads results.json
    back = FaultsRun.from_json(json.loads(store.path.read_text()))
    assert back == store.run and back.finished_at is not None
    assert back.settings is not None and back.settings.options is not None
    assert type(back.settings.options.delay) is int  # a whole number stays whole
    assert back.problems() == ["overload x.yml: e"]


def test_a_fault_runs_settings_are_written_as_they_always_were():
    """The faults first, then every option in its order: what `{"faults": ..., **asdict(...)}`
    wrote before the settings were a model; read back as the same model."""
    options = FaultSettings(concurrency=4, delay=2.0, overload_s=20.0)
    settings = FaultRunSettings(faults=["overload", "db-outage"], options=options)
    on_disk = json.loads(json.dumps(to_json(settings)))
    old = {"faults": ["overload", "db-outage"], **dataclasses.asdict(options)}
    assert json.dumps(on_disk) == json.dumps(old)
    assert from_json(FaultRunSettings, on_disk, "settings") == settings


def test_a_record_without_its_phases_is_redrawn_with_dashes_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A slowdown with no phases and an outage with no `during` (a run cut short): the report
    is written, with a dash where a phase is missing."""
    from playground import cli

    slowdown = SlowdownVerdict(probed=PROBED, slow_delay=5.0, settle_limit_s=1.5, aftermath=AFTER)
    outage = OutageVerdict(
        probed=PROBED, requests=0, answer_bound_s=6.0, requests_after_return=0, aftermath=AFTER
    )
    store = RunStore.create_run(results_dir=tmp_path, run=FaultsRun(run_id="r-faults"))
    for fault, target in (("upstream-slowdown", slowdown), ("upstream-outage", outage)):
        store.run.add(
            FaultRan.of(
                FaultFindings(fault=fault, targets=[target]),
                compose_file=("sync-gunicorn.yml",),
                started_at="t",
                marks=[],
                commands=[],
            )
        )
    store.save()
    assert cli.main(["report", str(store.path), "--results-dir", str(tmp_path)]) == 0
    report = (store.path.parent / "faults.md").read_text()
    assert "— / — / —" in report  # the medians of the phases it has not
    assert "Traceback" not in capsys.readouterr().err

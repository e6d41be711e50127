"""A story run's record keeps its sweep's steps, its closed loops and its cross-checks: written
from the run's results, read back the same, shown by `playground record --show`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from playground import cli
from playground.commands import kinds
from playground.core import records
from playground.incident import runrecords, steprecords
from playground.incident.storyresults import (
    CrossCheck,
    StoryRun,
    Sweep,
    SweepSettings,
    SweepStep,
    SweepTarget,
)
from playground.incident.targetresults import GeneratorCheck, ToolFigures

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


def _run() -> StoryRun:
    run = kinds.load_run(DATA / "story_results_recorded.json")
    assert isinstance(run, StoryRun)
    return run


def _step(rate: float, goodput: float, *, valid: bool = True) -> SweepStep:
    return SweepStep(
        rate=rate,
        offered_per_s=rate,
        attempts_per_s=1.5 * rate,
        goodput_per_s=goodput,
        timeouts=7,
        visits=int(20 * rate),
        visits_served=goodput / rate,
        latency_p99_s=2.01234,
        check=GeneratorCheck(valid=valid),
    )


def _swept() -> StoryRun:
    sweep = Sweep(
        settings=SweepSettings(delay=2.0),
        targets=[
            SweepTarget(name="story-uwsgi-threads", steps=[_step(40.0, 38.81), _step(80.0, 47.6)]),
            SweepTarget(name="story-uwsgi-gevent", steps=[_step(80.0, 79.0, valid=False)]),
        ],
    )
    tools = [
        ToolFigures(tool=tool, requests=1200, ok=ok, duration_s=20.0, latency_p50_s=2.0011)
        for tool, ok in (("openloop", 1200), ("oha", 1188))
    ]
    checks = [
        CrossCheck(target="story-uwsgi-threads", rate=60.0, openloop=tools[0], oha=tools[1]),
        CrossCheck(target="story-uwsgi-threads", rate=80.0, error="oha did not start"),
    ]
    return replace(_run(), sweep=sweep, crosschecks=checks)


def test_each_step_of_the_sweep_is_a_row_with_its_delay_and_check() -> None:
    steps = steprecords.sweep_steps(_swept())
    assert [(s.target, s.rate, s.goodput_per_s) for s in steps] == [
        ("uwsgi-threads", 40, 38.81),
        ("uwsgi-threads", 80, 47.6),
        ("uwsgi-gevent", 80, 79.0),
    ]
    assert {s.delay_s for s in steps} == {2.0}
    assert [s.valid for s in steps] == [True, True, False]
    assert steps[0].latency_p99_s == 2.012 and steps[1].attempts_per_s == 120.0


def test_a_cross_check_that_failed_to_measure_neither_agrees_nor_disagrees() -> None:
    measured, failed = steprecords.crosschecks(_swept())
    assert (measured.openloop_goodput_per_s, measured.oha_goodput_per_s) == (60.0, 59.4)
    assert measured.agree is True
    assert failed.agree is None and failed.oha_goodput_per_s is None


def test_the_closed_loops_phases_are_kept_per_target() -> None:
    run = _run()
    loops = steprecords.closed_loops(run)
    assert [c.target for c in loops] == ["uwsgi-threads", "uwsgi-gevent"]
    first = next(t.closed_loop for t in run.targets if t.closed_loop is not None)
    assert first is not None
    assert loops[0].per_s_during == pytest.approx(first.phase("during").per_s, abs=0.01)
    assert loops[0].concurrency == first.concurrency


def test_the_record_keeps_them_and_reads_back_the_same_bytes(tmp_path: Path) -> None:
    record = runrecords.from_run(_swept(), machine="2 cores")
    text = records.dumps(record)
    path = tmp_path / f"{record.run_id}.json"
    path.write_text(text)
    again = runrecords.load(path)
    assert again == record and records.dumps(again) == text
    assert len(again.sweep) == 3 and len(again.crosschecks) == 2 and len(again.closed_loop) == 2
    # A run without them writes no empty lists: the records of other runs stay as they were.
    bare = replace(record, sweep=[], closed_loop=[], crosschecks=[])
    assert '"sweep"' not in records.dumps(bare) and '"closed_loop"' not in records.dumps(bare)


def test_show_prints_the_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = runrecords.from_run(_swept(), machine="2 cores")
    path = tmp_path / f"{record.run_id}.json"
    path.write_text(records.dumps(record))
    assert cli.main(["record", "--show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "sweep" in shown and "47.6" in shown and "59.4" in shown

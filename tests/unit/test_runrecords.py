"""The compact run records (docs/runs/): written from a recorded story run, read back, shown;
and every run id the pages cite has one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from playground import cli
from playground.commands import kinds
from playground.core import records
from playground.incident import runrecords
from playground.incident.storyresults import StoryTarget
from playground.incident.targetresults import Incident, StorySecond, StorySummary

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
STORY = DATA / "story_results_recorded.json"
RUN_ID = re.compile(r"\b20\d{6}-\d{6}(?:-[a-z]+)?\b")


def _record(tmp_path: Path, *extra: str) -> Path:
    assert cli.main(["record", str(STORY), "--out", str(tmp_path), *extra]) == 0
    (path,) = tmp_path.glob("*.json")
    return path


def test_a_recorded_run_keeps_each_targets_figures(tmp_path: Path) -> None:
    record = runrecords.load(_record(tmp_path))
    assert record.source == runrecords.RECORDED
    assert record.run_id == "20261125-020108-story"
    assert record.machine == "2-core, Docker 20.10.24"
    # Only what differs from the defaults: the fixture's rate and pool, not its arrival.
    assert record.settings["rate"] == 30.0
    assert record.settings["threads"] == 8
    assert "arrival" not in record.settings and "workers" not in record.settings
    threads = record.target("uwsgi-threads", 1)
    assert threads.verdict == "collapsed and did not recover"
    assert threads.visits_served_during == pytest.approx(0.3626)
    assert threads.goodput_during == pytest.approx(1.07)
    assert threads.recovery_s is None
    assert threads.valid is True and threads.send_lag_p99_s == pytest.approx(0.00153)
    gevent = record.target("uwsgi-gevent", 1)
    assert (gevent.verdict, gevent.recovery_s, gevent.attempts_per_visit) == ("held", 1.0, 1.0)
    # The story's settings come back as the run had them.
    assert record.story_settings().rate == 30.0
    assert record.story_settings().normal_delay == 0.2


def test_the_same_run_gives_the_same_bytes_one_line_per_target(tmp_path: Path) -> None:
    first = _record(tmp_path / "a").read_bytes()
    second = _record(tmp_path / "b").read_bytes()
    assert first == second
    lines = first.decode().splitlines()
    assert sum('"name": "uwsgi-' in line for line in lines) == 2
    assert runrecords.dumps(runrecords.load(_record(tmp_path / "c"))).encode() == first


def test_the_machine_is_said_as_given(tmp_path: Path) -> None:
    record = runrecords.load(_record(tmp_path, "--machine", "2-core, 24 GiB"))
    assert record.machine == "2-core, 24 GiB"


def test_show_prints_the_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path)
    assert cli.main(["record", "--show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "20261125-020108-story (story, recorded)" in shown
    assert "36%" in shown and "1.5 / 3.2 ms" in shown


def test_a_bad_record_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "20261125-000000-story.json"
    bad.write_text(
        '{"run_id": "20261125-000000-story", "kind": "story", "targets": '
        '[{"name": "x", "verdict": "fine"}]}'
    )
    assert cli.main(["record", "--show", str(bad)]) == 2
    assert "unknown verdict" in capsys.readouterr().err
    other = tmp_path / "20261125-000001-story.json"
    other.write_text('{"run_id": "20261125-000000-story", "kind": "story"}')
    assert cli.main(["record", "--show", str(other)]) == 2


def test_every_run_the_pages_cite_has_a_record() -> None:
    cited = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        cited |= set(RUN_ID.findall(page.read_text()))
    kept = {kinds.load_record(p).run_id for p in sorted(records.RECORDS_DIR.glob("*.json"))}
    assert sorted(cited - kept) == [], "cited without a record in docs/runs/"


def test_the_busiest_workers_share_is_taken_before_the_incident_only() -> None:
    """The report's rule (incident/split.py): seconds 3 to the incident's start, means 4 and 1
    there: the busier worker's share is 4 / 5; the first seconds and the incident's do not
    count."""
    seconds = [
        StorySecond(t=0, worker_connections=[6, 2]),
        StorySecond(t=1, worker_connections=[9, 9]),
        StorySecond(t=2, worker_connections=[0, 8]),
        StorySecond(t=3, worker_connections=[5, 1]),
        StorySecond(t=4, worker_connections=[3, 1]),
        StorySecond(t=5, worker_connections=[0, 90]),
    ]
    target = StoryTarget(
        incident=Incident(start=5, seconds=1), seconds=seconds, summary=StorySummary()
    )
    assert runrecords.busiest_share_before(target) == pytest.approx(0.8)
    assert runrecords.busiest_share_before(StoryTarget(seconds=seconds)) is None

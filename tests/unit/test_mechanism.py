"""The candidates for what decides a collapse, from one repeat's logs (incident/mechanism.py),
and the app's timing log they are read from (flask_app/timing.py, story/serverside.py)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from playground.incident import mechanism
from playground.incident.captured import AccessRecord, AppTiming, UpstreamCall
from playground.incident.targetresults import StorySecond
from playground.story.serverside import parse_timing_log

T0 = 1_000_000.0  # the generator's start, wall clock
START = 20.0  # the incident, seconds after it


def _timing(rid: str, pid: int, began: float, *, work: float, call: float) -> AppTiming:
    """A request begun `began` seconds after T0 that worked `work` s around a call of `call` s."""
    b = T0 + began
    return AppTiming(rid, pid, b, b + work / 2, b + work / 2 + call, b + work + call)


def test_the_app_writes_one_line_per_request_that_the_runner_reads_back(tmp_path, monkeypatch):
    log = tmp_path / "timing.log"
    monkeypatch.setenv("TIMING_LOG", str(log))
    spec = importlib.util.spec_from_file_location(
        "timing_under_test", Path(__file__).parents[2] / "flask_app" / "timing.py"
    )
    assert spec and spec.loader
    timing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timing)
    timing.record("abc", 10.5, (10.6, 12.6), 12.7)
    timing.record("def", 11.0, None, 11.1)
    timing.record(None, 11.0, None, 11.1)  # no id: nothing to join it with
    read = parse_timing_log(log.read_text() + "partial line")
    assert [t.request_id for t in read] == ["abc", "def"]
    assert read[0] == AppTiming("abc", os.getpid(), 10.5, 10.6, 12.6, 12.7)
    assert read[1].call_began is None and read[1].call_ended is None


def test_the_busiest_worker_share_is_counted_from_the_requests_each_process_began():
    timings = [_timing(f"r{i}", 7 if i % 3 else 8, 10 + i * 0.1, work=0, call=0) for i in range(30)]
    # pid 7 began 20 of the 30, pid 8 the other 10
    assert mechanism.busiest_begun(timings, T0 + 10, T0 + 13) == pytest.approx(20 / 30, abs=1e-4)
    assert mechanism.busiest_begun(timings, T0 + 50, T0 + 60) is None  # none began then
    one = [t for t in timings if t.pid == 7]
    assert mechanism.busiest_begun(one, T0, T0 + 60) is None  # one process: no split


def test_a_thread_held_beyond_the_third_partys_time_is_split_into_work_and_call_overhead():
    t = _timing("x", 7, START + 1, work=0.004, call=2.010)
    # the third party held the call 2.000 s of its 2.010
    call = UpstreamCall("x", t.call_began + 0.006, t.call_began + 2.006)
    (began, work, overhead), *_ = mechanism.hold_parts([t], [call])
    assert began == t.began
    assert work == pytest.approx(0.004)
    assert overhead == pytest.approx(0.010)
    # a request whose call slow_api never answered (or never got) has no parts
    assert mechanism.hold_parts([t], []) == []


def _rows(n: int, *, cpu: float, goodput: int, split: list[int]) -> list[StorySecond]:
    return [
        StorySecond(t=t, goodput=goodput, cpu_pct=cpu, worker_connections=split, listen_queue=t)
        for t in range(n)
    ]


def test_the_onset_candidates_read_only_the_incidents_first_seconds():
    fast = [_timing(f"b{i}", 7 + i % 2, 10 + i * 0.05, work=0.002, call=0.701) for i in range(100)]
    slow = [
        _timing(f"o{i}", 7 if i % 4 else 8, START + 0.6 + i * 0.04, work=0.006, call=2.020)
        for i in range(100)
    ]
    calls = [
        UpstreamCall(t.request_id, t.call_began, t.call_began + (0.7 if t in fast else 2.0))
        for t in fast + slow
    ]
    # nginx took each request 0.1 s (before) or 0.5 s (onset) before the view began
    access = [
        AccessRecord(t.ended, 200, t.ended - t.began + (0.1 if t in fast else 0.5), t.request_id)
        for t in fast + slow
    ]
    rows = _rows(90, cpu=10.0, goodput=50, split=[40, 60])
    m = mechanism.candidates(
        onset=mechanism.Onset(t0_wall=T0, start_s=START),
        timings=fast + slow,
        access=access,
        calls=calls,
        rows=rows,
        sent=[(1, START + 0.5), (1, START + 4.9), (2, START + 1), (1, START + 5.1)],
        steal_share=0.01234,
    )
    assert m.busiest_share_begun_before == pytest.approx(0.5, abs=0.01)
    assert m.busiest_share_begun_onset == pytest.approx(0.75, abs=0.01)
    assert m.busiest_share_held_onset == pytest.approx(0.6)
    assert m.hold_beyond_before_ms == pytest.approx(3.0, abs=0.01)
    assert m.hold_beyond_onset_ms == pytest.approx(26.0, abs=0.01)
    assert m.app_work_onset_ms == pytest.approx(6.0, abs=0.01)
    assert m.call_overhead_onset_ms == pytest.approx(20.0, abs=0.01)
    assert m.thread_wait_p90_before_s == pytest.approx(0.1, abs=0.002)
    assert m.thread_wait_p90_onset_s == pytest.approx(0.5, abs=0.002)
    assert m.cpu_ms_per_request_before == pytest.approx(2.0)  # 10 % of a core over 50 answers/s
    assert m.arrivals_onset == 2  # first attempts in [20, 25): not the reload, not 25.1
    assert m.listen_queue_max_onset == 24  # the rows' seconds 20 to 24
    assert m.steal_share == 0.0123


def test_the_report_shows_each_measurements_candidates_and_the_targets_that_settled():
    from playground.incident.mechanism import Mechanism
    from playground.incident.storyresults import Settled, StoryRun, StoryTarget
    from playground.report.document import Table, render_markdown
    from playground.story import mechanismreport

    run = StoryRun(run_id="20990101-000000-story", repeat=10, settle=4)
    assert mechanismreport.blocks(run) == []  # nothing measured with candidates: no section
    run.targets = [
        StoryTarget(
            name="story-gunicorn-threads",
            repeat=1,
            mechanism=Mechanism(
                busiest_share_begun_before=0.7012,
                busiest_share_begun_onset=0.66,
                thread_wait_p90_onset_s=1.154,
                hold_beyond_onset_ms=3.12,
                cpu_ms_per_request_before=3.109,
                steal_share=0.0001,
            ),
        ),
        StoryTarget(name="story-gunicorn-gevent", repeat=1),
    ]
    run.settled = [Settled("story-gunicorn-gevent", 4, 0, 4)]
    made = mechanismreport.blocks(run)
    (table,) = [b for b in made if isinstance(b, Table)]
    assert len(table.rows) == 1  # the gevent target kept no candidates
    text = render_markdown(made)
    assert "0.70 / 0.66" in text and "1.15 s" in text and "3.1" in text and "0.01 %" in text
    assert "story-gunicorn-gevent: its repeats stopped after 4 of at most 10" in text
    assert "collapsed in 0 of 4 trusted repeats (--settle 4)" in text

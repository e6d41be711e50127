"""The story's pure parts: its settings, what the servers report, the per-second series, the
summary and the report, on data whose answer is known."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from playground.core.errors import UsageError
from playground.core.scenarios import REGISTRY, STORY_CONTENDERS, resolve_story, story_targets
from playground.incident import analysis, held
from playground.incident.captured import ServerSample, calls_for_nobody
from playground.incident.settings import StoryError, StorySettings, SweepSettings
from playground.incident.storyresults import StoryRun, StoryTarget, Sweep, SweepTarget
from playground.incident.targetresults import GeneratorCheck
from playground.story import findings, headline, report
from playground.story.closedloop import summarise_ab
from playground.story.plan import openloop_args
from playground.story.run import measure_incident
from playground.story.serverside import (
    accept_queue,
    parse_access_log,
    parse_calls_log,
    stub_status_figures,
    uwsgi_figures,
)
from playground.story.sweep import step_args, summarise_step

UWSGI_THREADS = REGISTRY["story-uwsgi-threads"]

DATA = Path(__file__).resolve().parents[1] / "data"

NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0BB8 00000000:0000 0A 00000000:00000011 00:00000000 00000000 10001 0 1 1 0 100 0
   1: 00000000:06B5 00000000:0000 0A 00000000:00000002 00:00000000 00000000 10001 0 2 1 0 100 0
   2: 0B00120A:0BB8 0C00120A:A1C2 01 00000000:00000000 00:00000000 00000000 10001 0 3 1 0 20 4
"""
STUB_STATUS = """Active connections: 131 
server accepts handled requests
 1810 1810 1810 
Reading: 0 Writing: 129 Waiting: 1 
"""


# --- settings ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"rate": 0}, "rate must be above 0"),
        ({"timeout": -1}, "timeout must be above 0"),
        ({"incident_delay": 0.5}, "must be longer than the normal one"),
        ({"incident_delay": 90}, "at most 60 s"),
        ({"threads": 0}, "threads must be at least 1"),
        ({"before_s": -5}, "before_s must be 0 or more"),
    ],
)
def test_bad_story_settings_are_clear_errors(change, says):
    with pytest.raises(StoryError, match=says):
        StorySettings(**change)


def test_the_default_story_keeps_the_incidents_ratios():
    s = StorySettings()
    pool = s.workers * s.threads
    assert pool / s.rate == pytest.approx(640 / 300, rel=0.01)  # pool per request/s
    assert s.rate * s.normal_delay / pool == pytest.approx(1 / 3, abs=0.02)  # a third busy
    assert s.incident_delay == 2.0


def test_the_generator_sends_the_incident_to_the_third_party_at_its_time():
    args = openloop_args(
        StorySettings(before_s=12, incident_s=30), UWSGI_THREADS, out="/out/x.json"
    )
    at = args[args.index("--at") + 1]
    assert at == "12:POST:http://slow_api:4000/control/slowdown?extra=1.3&seconds=30"
    assert args[args.index("--duration") + 1] == "82"
    assert args[args.index("--url") + 1] == "http://ingress:8080/?delay=0.7"


def test_every_story_target_is_the_registrys_and_names_its_compose_project():
    root = Path(__file__).resolve().parents[2]
    targets = story_targets()
    assert {t.model for t in targets} == {"threads", "gevent"}
    for t in (*targets, *STORY_CONTENDERS):
        text = (root / t.compose_file).read_text()
        assert f"name: {t.name}" in text
        # ... and the file it extends, where it extends another story file.
        for parent in re.findall(r"extends: \{file: ([\w.-]+\.yml)", text):
            text += (root / "story" / parent).read_text()
        # The pool the file starts by default is the one the registry says.
        env = {"threads": "STORY_THREADS:-", "gevent": "STORY_ASYNC_CORES:-"}.get(t.model)
        assert env is None or f"{env}{t.per_worker}" in text, t.name
        assert f"STORY_WORKERS:-{t.workers}" in text, t.name
    assert resolve_story(["uwsgi-threads"]) == [UWSGI_THREADS]
    assert resolve_story(["story-uwsgi-threads"]) == [UWSGI_THREADS]
    assert resolve_story([]) == targets
    with pytest.raises(UsageError, match="unknown story target 'devserver'"):
        resolve_story(["devserver"])


# --- what the servers report --------------------------------------------------------------
def test_accept_queue_reads_the_listening_socket_of_the_port():
    assert accept_queue(NET_TCP, port=3000) == 17
    assert accept_queue(NET_TCP, port=1717) == 2
    assert accept_queue(NET_TCP, port=8080) is None


def test_uwsgi_figures_count_busy_workers_and_cores():
    stats = {
        "listen_queue": 7,
        "listen_queue_errors": 1,
        "workers": [
            {"status": "busy", "cores": [{"in_request": 1}, {"in_request": 0}, {"in_request": 1}]},
            {"status": "idle", "cores": [{"in_request": 0}]},
        ],
    }
    assert uwsgi_figures(stats) == {
        "uwsgi_listen_queue": 7,
        "uwsgi_listen_queue_errors": 1,
        "busy_workers": 1,
        "busy_cores": 2,
        "cores": 4,
    }


def test_stub_status_figures():
    assert stub_status_figures(STUB_STATUS) == {
        "nginx_active": 131,
        "nginx_reading": 0,
        "nginx_writing": 129,
        "nginx_waiting": 1,
    }
    assert stub_status_figures("502 Bad Gateway") == {}


def test_access_log_lines():
    text = "1795433900.227 200 0.715 0.715\n1795433901.5 499 4.001 - 9f0a\ngarbage\n"
    records = parse_access_log(text)
    assert [(r.status, r.request_time) for r in records] == [(200, 0.715), (499, 4.001)]
    assert [r.request_id for r in records] == [None, "9f0a"]


def test_a_call_answered_after_nginx_ended_its_request_was_for_nobody():
    """Joined on the request's id: the answer nginx sent on (ready before nginx's end, or
    within its millisecond) served someone; one ready after the user's 499 or the app's own
    504 served nobody; a call whose id nginx never logged is not counted either way."""
    access = parse_access_log(
        "1000.800 200 0.700 0.700 a\n"  # answered at 1000.7995: sent on
        "1004.000 499 4.000 - b\n"  # the user left at 1004; answered at 1005
        "1001.500 504 1.500 1.500 c\n"  # the app gave up at 1.5 s; retried, both late
        "1002.000 200 0.700 0.700 d\n"  # answered within nginx's millisecond
    )
    calls = parse_calls_log(
        "a 1000.1000 1000.7995\n"
        "b 1002.0000 1005.0000\n"
        "c 1000.0000 1003.0000\n"
        "c 1001.5000 1004.5000\n"
        "d 1001.3000 1002.0008\n"
        "z 1000.0000 1009.0000\n"  # not in nginx's log
        "partial 1000\n"
    )
    assert [c.request_id for c in calls] == ["a", "b", "c", "c", "d", "z"]
    assert calls_for_nobody(calls, access) == (5, 3)
    assert calls_for_nobody([], access) == (0, 0)


# --- the series -------------------------------------------------------------------------
def A(visit, attempt, intended, end, outcome="ok", status=200, sent=None):
    return analysis.Attempt(
        visit=visit,
        attempt=attempt,
        intended=intended,
        sent=intended if sent is None else sent,
        end=end,
        outcome=outcome,
        status=status if outcome != "timeout" else 0,
    )


ATTEMPTS = [
    A(0, 1, 0.1, 0.8),
    A(1, 1, 0.5, 4.5, "timeout"),
    A(1, 2, 5.5, 6.2),
    A(2, 1, 1.2, 1.3, "status", 502),
    A(2, 2, 2.3, 6.3, "timeout"),
    A(2, 3, 7.3, 11.3, "timeout"),
    A(3, 1, 2.9, 3.6),
]


def test_visits_count_from_the_first_intended_send_to_the_first_success():
    visits = {v.visit: v for v in analysis.visits_from(ATTEMPTS)}
    assert visits[0].latency == pytest.approx(0.7) and visits[0].succeeded
    assert visits[1].latency == pytest.approx(5.7) and visits[1].attempts == 2
    # Never served: what the user had waited when they gave up for good (>= the timeout).
    assert not visits[2].succeeded and visits[2].latency == pytest.approx(10.1)


def test_per_second_series_add_up_and_place_each_attempt_once():
    rows = analysis.per_second(ATTEMPTS, seconds=12)
    assert analysis.check_adds_up(ATTEMPTS, rows) == []
    assert [r.arrivals for r in rows[:4]] == [2, 1, 1, 0]
    assert rows[2].refreshes == 1 and rows[5].refreshes == 1 and rows[7].refreshes == 1
    assert rows[0].goodput == 1 and rows[4].timeouts == 1 and rows[1].errors == 1
    # At the end of second 3 (t=4): visit 1's first attempt and visit 2's second are in flight.
    assert rows[3].in_flight == 2
    assert rows[0].latency_p50 == pytest.approx(0.7)


def test_the_adds_up_check_catches_a_lost_attempt():
    rows = analysis.per_second(ATTEMPTS, seconds=12)
    rows[4] = replace(rows[4], timeouts=rows[4].timeouts - 1)
    assert any("ended" in p for p in analysis.check_adds_up(ATTEMPTS, rows))


def test_recovery_is_when_goodput_is_back_to_the_answers_due_and_stays():
    due = [10] * 44
    collapsed = [10] * 10 + [0] * 10 + [2] * 4 + [10] * 20
    assert analysis.recovery_time(collapsed, due, incident_end=20, until=44) == 4
    never = [10] * 10 + [0] * 30
    assert analysis.recovery_time(never, due[:40], incident_end=20, until=40) is None
    # A dip after a first good window is not a recovery yet.
    relapse = [10] * 20 + [10] * 6 + [0] * 3 + [10] * 15
    assert analysis.recovery_time(relapse, due, incident_end=20, until=44) == 9
    # A backlog served late while users still time out is not a recovery either.
    drained = [10] * 20 + [30] * 24
    failing = [0] * 20 + [20] * 6 + [0] * 18
    assert analysis.recovery_time(drained, due, incident_end=20, until=44, failed=failing) == 6


def test_answers_fall_due_one_normal_latency_after_the_visit_arrives():
    attempts = [A(0, 1, 0.5, 1.2), A(1, 1, 0.9, 1.6), A(1, 2, 3.0, 3.5), A(2, 1, 2.2, 2.9)]
    assert analysis.expected_goodput(attempts, lag=0.7, seconds=4) == [0, 2, 1, 0]


def _result(attempts):
    cols = ["visit", "attempt", "intended", "sent", "end", "outcome", "status", "detail"]
    return {
        "columns": cols,
        "t0_monotonic": 100.0,
        "t0_wall": 1000.0,
        "check": {"valid": True, "reasons": []},
        "loop": "uvloop",
        "events": [{"sent": 2.0, "at": 2.0, "status": 200}],
        "attempts": [
            [a.visit, a.attempt, a.intended, a.sent, a.end, a.outcome, a.status, ""]
            for a in attempts
        ],
    }


def test_the_servers_and_the_access_log_line_up_with_the_attempts():
    settings = StorySettings(before_s=2, incident_s=4, after_s=6, timeout=4)
    samples = [ServerSample(monotonic=103.4, figures={"listen_queue": 9, "threads": 129})]
    access = "1004.5 499 4.0 - r1\n1000.8 200 0.7 0.7 r2\n"
    t = measure_incident(
        StoryTarget(),
        output=analysis.generator_output(_result(ATTEMPTS)),
        samples=samples,
        access_text=access,
        settings=settings,
        calls_text="r1 1001.0 1004.7\nr2 1000.1 1000.8\n",
    )
    incident, problems, s, rows = t.incident, t.adds_up, t.summary, t.seconds
    assert problems == []
    assert incident.start == 2.0 and incident.seconds == 4
    assert rows[3].listen_queue == 9 and rows[3].threads == 129 and rows[2].threads is None
    assert rows[4].nginx_499 == 1 and rows[0].nginx_499 == 0
    assert s.visits == 4 and s.attempts == 7
    assert s.amplification == pytest.approx(7 / 4)
    assert s.wasted_499 == 1 and s.peak_listen_queue == 9 and s.visits_never_served == 1
    assert (s.upstream_calls, s.calls_for_nobody) == (2, 1)


def _target(name="story-uwsgi-threads", **kw) -> StoryTarget:
    """A target measured on the hand-made attempts above, with its findings decided."""
    settings = StorySettings(before_s=2, incident_s=4, after_s=6, timeout=4)
    t = measure_incident(
        StoryTarget(
            name=name,
            title="nginx -> uWSGI 2 x 64 threads",
            model="threads",
            server="uWSGI",
            commands=["docker compose up"],
            **kw,
        ),
        output=analysis.generator_output(_result(ATTEMPTS)),
        samples=[],
        access_text="",
        settings=settings,
    )
    t.findings = findings.for_target(t)
    return t


def _run(*targets, sweep=None) -> StoryRun:
    return StoryRun(
        run_id="20261125-010203-story",
        started_at="2026-11-25T01:02:03+0000",
        finished_at="2026-11-25T01:04:03+0000",
        command="playground story",
        story=StorySettings(before_s=2, incident_s=4, after_s=6, timeout=4),
        targets=list(targets),
        sweep=sweep,
    )


def test_report_writes_markdown_html_and_a_chart_per_target(tmp_path):
    failed = StoryTarget(name="story-uwsgi-gevent", error="did not become healthy")
    paths = report.write_report(run_dir=tmp_path, run=_run(_target(), failed))
    md = (tmp_path / "report.md").read_text()
    # The one visit during the incident [2, 6) was served: it held, by the findings' rule.
    assert "| story-uwsgi-threads | held, 1 of 1 (21-100 %) |" in md
    assert "|---|" in md.split("| target |")[1].splitlines()[1]
    assert "error: did not become healthy" in md
    assert "![" in md and "(story-uwsgi-threads.png)" in md
    assert (tmp_path / "story-uwsgi-threads.png").stat().st_size > 10_000
    assert "data:image/png;base64," in (tmp_path / "report.html").read_text()
    assert len(paths) == 3


def test_the_report_says_when_the_users_back_off(tmp_path):
    run = _run(_target())
    report.write_report(run_dir=tmp_path, run=run)
    assert "waits 1 s and reloads, up to 3 attempts" in (tmp_path / "report.md").read_text()
    run.story = replace(run.story, refresh_backoff=2.0)
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "waits about 1 s and reloads, each wait 2 times the one before" in md


def test_an_invalid_generator_run_is_marked_and_no_headline(tmp_path):
    t = _target()
    t.check = GeneratorCheck(
        valid=False,
        reasons=["send lag p99 17.6 ms > 10 ms"],
        send_lag_p50_s=0.0004,
        send_lag_p99_s=0.0176,
        send_lag_max_s=0.052,
    )
    t.findings = findings.for_target(t)
    run = _run(t)
    assert findings.failed(run) == ["story-uwsgi-threads"]
    assert not findings.trusted(t)
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "held (INVALID run: not a headline)" in md
    assert "> Not trusted: story-uwsgi-threads: open loop: the load generator did not" in md
    # The headline withholds its figures and shows why: the send lag.
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in md.splitlines()
        if line.startswith("| story-uwsgi-threads |")
    ]
    users, waits, server, lag = rows[: len(headline.TABLES)]
    assert users[1] == "held (INVALID run: not a headline)"
    assert {*users[2:], *waits[1:], *server[1:-2]} == {"withheld"}
    assert server[-2:] == ["-", "-"]  # the model's figures, not a measurement: not shown
    assert lag[1:] == ["0.4", "17.6", "52.0"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--rate", "0"], "rate must be above 0"),
        (["--incident-delay", "0.1"], "must be longer than the normal one"),
        (["uwsgi-fibers"], "unknown story target 'uwsgi-fibers'"),
        (["--sweep", "--sweep-rates", ""], "the sweep needs at least one rate"),
        (["--sweep", "--sweep-rates", "20,0"], "every sweep rate must be above 0"),
        (["--sweep", "--sweep-delay", "-2"], "the sweep's delay must be above 0"),
        (["--no-incident"], "leaves nothing to run"),
        (["--closed-loop", "--ab-concurrency", "0"], "ab_concurrency must be 1 to"),
    ],
)
def test_story_command_refuses_bad_settings_before_touching_docker(capsys, argv, says):
    from playground import cli

    assert cli.main(["story", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


# --- the sweep ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"rates": ()}, "at least one rate"),
        ({"rates": (20.0, 0.0)}, "every sweep rate must be above 0, got 0"),
        ({"delay": -2}, "delay must be above 0"),
        ({"delay": 90}, "at most 60 s"),
        ({"measure_s": 0}, "measure_s must be at least 1 s"),
        ({"warmup_s": -1}, "warm-up must be 0 or more"),
    ],
)
def test_bad_sweep_settings_are_clear_errors(change, says):
    with pytest.raises(StoryError, match=says):
        SweepSettings(**change)


def test_the_sweep_steps_use_the_story_users_and_a_fixed_third_party():
    story, sweep = StorySettings(), SweepSettings()
    args = step_args(story, sweep, UWSGI_THREADS, rate=80, out="/out/s.json")
    assert args[args.index("--url") + 1] == "http://ingress:8080/?delay=2"
    assert args[args.index("--rate") + 1] == "80"
    assert args[args.index("--duration") + 1] == "25"
    assert args[args.index("--max-attempts") + 1] == "3" and "--at" not in args
    assert sweep.capacity(story) == 64  # 2 x 64 threads / 2 s


def _step_attempts():
    """A step at 4 visits/s: warm-up [0, 2), window [2, 4); the last visits refresh."""
    return [
        A(0, 1, 0.2, 1.0),  # warm-up: not counted
        A(1, 1, 1.9, 2.1),  # ends in the window: goodput
        A(2, 1, 2.0, 2.5),
        A(3, 1, 2.5, 4.5, "timeout"),  # a timeout ends after the window
        A(3, 2, 5.5, 6.0),  # ... its refresh after it too
        A(4, 1, 3.0, 3.1, "status", 502),
        A(4, 2, 3.6, 3.9),  # error then refresh, in window
        A(5, 1, 3.5, 5.5, "timeout"),
        A(5, 2, 6.5, 8.5, "timeout"),
        A(5, 3, 9.5, 11.5, "timeout"),  # never served
    ]


def test_a_sweep_step_counts_its_window_only_and_every_attempt_once():
    step = summarise_step(
        attempts=_step_attempts(),
        rate=2.0,
        warmup_s=2,
        measure_s=2,
        check=GeneratorCheck(valid=True, send_lag_p99_s=0.001),
    )
    assert step.adds_up == []
    assert step.window_s == 2
    assert step.offered_per_s == 2.0  # visits 2, 3, 4, 5 arrived in [2, 4)
    assert step.attempts_per_s == 2.5  # ... and visit 4's refresh
    assert step.goodput_per_s == 1.5  # visits 1, 2 and 4's refresh ended in [2, 4)
    assert (step.timeouts, step.errors) == (0, 1)
    assert step.visits == 4 and step.visits_served == 0.75
    assert step.latency_p50_s == pytest.approx(0.9)  # visit 4: 3.0 -> 3.9
    assert step.latency_p99_s == pytest.approx(8.0)  # visit 5, never served: 3.5 -> 11.5
    assert step.valid and step.check is not None and step.check.send_lag_p99_s == 0.001


def test_a_sweep_step_reports_an_invalid_generator_and_a_lost_attempt():
    attempts = _step_attempts()
    result = _result(attempts)
    result["check"] = {
        "valid": False,
        "reasons": ["send lag p99 17.6 ms > 5 ms"],
        "send_lag_p99_s": float("nan"),
    }
    check = analysis.generator_output(result).check
    step = summarise_step(attempts=attempts, rate=2.0, warmup_s=2, measure_s=2, check=check)
    assert not step.valid and step.check.reasons and step.check.send_lag_p99_s is None
    where = findings.for_sweep_target(SweepTarget(name="story-uwsgi-threads", steps=[step]))
    assert [f.code for f in where] == ["generator-invalid"]
    # A visit whose first attempt is missing: its refresh has no arrival to belong to.
    lost = summarise_step(
        attempts=[a for a in attempts if (a.visit, a.attempt) != (3, 1)],
        rate=2.0,
        warmup_s=2,
        measure_s=2,
        check=GeneratorCheck(valid=True),
    )
    assert lost.adds_up and "arrivals" in lost.adds_up[0]


# --- the closed loop through the incident -------------------------------------------------
def _ab(tsv: str, stdout: str):
    from playground.core.tools.abreport import AbTool
    from playground.core.tools.abrequests import ab_rows

    rows = ab_rows(tsv)
    return rows, AbTool().parse(stdout=stdout, per_request=None, concurrency=6)


def test_every_ab_request_lands_in_one_phase_of_the_incident():
    rows, result = _ab(
        (DATA / "ab_story_incident_c6.tsv").read_text(),
        (DATA / "ab_story_incident_c6.txt").read_text(),
    )
    t0 = min(r.start_s for r in rows)
    closed = summarise_ab(
        requests=rows, result=result, concurrency=6, incident_wall=t0 + 4.443, incident_s=15
    )
    assert closed.adds_up == []
    assert sum(p.requests for p in closed.phases) == closed.requests == result.complete
    before, during, after = (closed.phase(n) for n in ("before", "during", "after"))
    assert (before.start_s, before.end_s, during.end_s) == (0, 4.443, 19.443)
    assert (before.requests, during.requests, after.requests) == (103, 60, 262)
    # The closed loop slowed down with the third party: fewer requests sent, slower each.
    assert during.per_s < 0.5 * before.per_s and after.per_s > 2 * during.per_s
    assert during.latency_max_s > 1.5 > before.latency_max_s
    assert closed.failed == 0


def test_the_ab_phases_catch_rows_missing_from_its_report():
    rows, result = _ab(
        (DATA / "ab_story_incident_c6.tsv").read_text(),
        (DATA / "ab_story_incident_c6.txt").read_text(),
    )
    closed = summarise_ab(
        requests=rows[1:],
        result=result,
        concurrency=6,
        incident_wall=min(r.start_s for r in rows) + 4.443,
        incident_s=15,
    )
    assert closed.adds_up and "ab reported" in closed.adds_up[0]


def test_report_shows_the_sweep_and_the_closed_loop(tmp_path):
    rows, result = _ab(
        (DATA / "ab_story_incident_c6.tsv").read_text(),
        (DATA / "ab_story_incident_c6.txt").read_text(),
    )
    closed = summarise_ab(
        requests=rows,
        result=result,
        concurrency=6,
        incident_wall=min(r.start_s for r in rows) + 4.443,
        incident_s=15,
    )
    sweep = SweepSettings(rates=[2.0, 4.0], warmup_s=2, measure_s=2)
    steps = [
        summarise_step(
            attempts=_step_attempts(),
            rate=r,
            warmup_s=2,
            measure_s=2,
            check=GeneratorCheck(valid=r < 3),
        )
        for r in sweep.rates
    ]
    run = _run(
        _target(closed_loop=replace(closed, commands=["ab -t 90"])),
        StoryTarget(name="story-uwsgi-gevent", closed_loop_error="ab gave no report"),
        sweep=Sweep(
            settings=sweep,
            targets=[
                SweepTarget(
                    name="story-uwsgi-threads",
                    model="threads",
                    capacity_per_s=64.0,
                    steps=steps,
                    commands=["docker run ... openloop.py --rate 2"],
                ),
                SweepTarget(name="story-gunicorn-gevent", error="did not become healthy"),
            ],
        ),
    )
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "## The same incident under a closed loop (ab)" in md
    assert "| story-uwsgi-threads | 6 | 23 → 4 → 23 | 0 | 0 | 2.0 s |" in md
    assert "error: ab gave no report" in md
    assert "## Goodput against offered load" in md and "(story-sweep.png)" in md
    assert "| story-uwsgi-threads | 4 | 2.0 | 2.5 | 1.5 |" in md
    assert "error: did not become" in md
    assert (tmp_path / "story-sweep.png").stat().st_size > 10_000


def test_a_recorded_sweep_step_of_a_full_pool_adds_up_and_shows_the_collapse():
    """A real step (the generator's own JSON): uwsgi-threads with 2 x 4 threads, the third
    party at 1 s (8 answers/s at most), 16 visits/s offered for 3 + 8 s, users reloading."""
    import json

    output = analysis.generator_output(
        json.loads((DATA / "openloop_sweep_step_pool8_16rps.json").read_text())
    )
    attempts = output.attempts
    step = summarise_step(attempts=attempts, check=output.check, rate=16, warmup_s=3, measure_s=8)
    assert step.adds_up == []
    # Every attempt lies on exactly one second of the window's series or outside it.
    rows = analysis.per_second(attempts, seconds=12)
    inside = sum(r.arrivals + r.refreshes for r in rows if 3 <= r.t < 11)
    assert inside == round(step.attempts_per_s * step.window_s)
    assert step.goodput_per_s < 8 < step.offered_per_s < step.attempts_per_s
    assert step.timeouts > 0 and step.visits_served < 0.5
    assert step.valid == output.check.valid


# --- a story run is a run like any other: stored, listed, re-rendered, compared -----------
def _store(results_dir: Path, run: StoryRun) -> Path:
    from playground.core.runstore import RunStore

    return RunStore.create_run(results_dir=results_dir, run=run).run_dir


def test_a_story_run_goes_to_json_and_back_unchanged(tmp_path):
    from playground.commands import kinds

    t = _target(closed_loop=None)
    run = _run(t, StoryTarget(name="story-uwsgi-gevent", error="did not become healthy"))
    loaded = kinds.load_run(_store(tmp_path, run))
    assert isinstance(loaded, StoryRun)
    assert loaded == run
    assert loaded.targets[0].seconds[3] == t.seconds[3]
    assert loaded.to_json() == run.to_json()


def test_a_story_file_that_does_not_fit_the_model_is_a_clear_error(tmp_path):
    import json

    from playground.commands import kinds
    from playground.core import runstore

    data = _run(_target()).to_json()
    data["story"]["rate"] = 0
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text(json.dumps(data))
    with pytest.raises(runstore.ResultsError, match="rate must be above 0"):
        kinds.load_run(tmp_path / "bad")
    data = _run(_target()).to_json()
    data["targets"][0]["summary"]["visits"] = "many"
    (tmp_path / "bad" / "results.json").write_text(json.dumps(data))
    with pytest.raises(runstore.ResultsError, match="'visits' should be a whole number"):
        kinds.load_run(tmp_path / "bad")


def test_playground_report_and_compare_work_on_story_runs(tmp_path, capsys):
    from playground import cli

    a = _store(tmp_path, _run(_target()))
    slower = _target()
    slower.summary = replace(slower.summary, goodput_during=12.5, visits_served_during=0.5)
    slower.findings = findings.for_target(slower)
    b_run = _run(slower)
    b_run.run_id = "20261125-020304-story"
    b = _store(tmp_path, b_run)
    assert cli.main(["report", a.name, "--results-dir", str(tmp_path)]) == 0
    assert "| story-uwsgi-threads | held, 1 of 1 (21-100 %) |" in (a / "report.md").read_text()
    capsys.readouterr()
    assert cli.main(["compare", a.name, b.name, "--results-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert "story-uwsgi-threads" in shown and "held" in shown and "collapsed" in shown
    assert "12.5" in shown
    assert cli.main(["runs", "--results-dir", str(tmp_path)]) == 0
    listed = capsys.readouterr().out
    assert a.name in listed and b.name in listed and "story" in listed


def test_a_story_and_a_bench_run_are_not_compared(tmp_path, capsys):
    import shutil

    from playground import cli

    a = _store(tmp_path, _run(_target()))
    bench = tmp_path / "20261123-000000"
    bench.mkdir()
    shutil.copy(DATA / "results_recorded.json", bench / "results.json")
    assert cli.main(["compare", a.name, bench.name, "--results-dir", str(tmp_path)]) == 2
    assert "runs of different kinds" in capsys.readouterr().err


# --- repeats ----------------------------------------------------------------------------------
def _repeat(k: int, *, served: float, goodput: float, valid: bool = True) -> StoryTarget:
    t = _target()
    t.repeat = k
    t.summary = replace(t.summary, visits_served_during=served, goodput_during=goodput)
    if not valid:
        t.check = GeneratorCheck(valid=False, reasons=["send lag p99 9.0 ms > 5 ms"])
    t.findings = findings.for_target(t)
    return t


def test_repeats_give_the_median_and_range_of_the_trusted_runs_only():
    from playground.story import repeats

    runs = [
        _repeat(1, served=1.0, goodput=59.0),
        _repeat(2, served=1.0, goodput=57.0),
        _repeat(3, served=0.2, goodput=3.0, valid=False),  # not trusted: left out
        _repeat(4, served=0.99, goodput=58.0),
    ]
    (sp,) = repeats.spreads(runs, after_s=6)
    assert (sp.repeats, sp.trusted, sp.verdicts) == (4, 3, ["held", "held", "held"])
    g = sp.figure("goodput_during")
    assert (g.median, g.min, g.max) == (58.0, 57.0, 59.0)
    assert [f.code for f in sp.findings] == ["repeats-left-out"]


def test_a_verdict_that_changes_between_repeats_is_flagged_as_k_of_n(tmp_path):
    from playground.story import repeats

    runs = [
        _repeat(1, served=1.0, goodput=59.0),
        _repeat(2, served=0.6, goodput=29.0),
        _repeat(3, served=0.97, goodput=41.0),
    ]
    (sp,) = repeats.spreads(runs, after_s=6)
    assert sp.verdicts == ["held", "collapsed", "held"]
    assert [f.code for f in sp.findings] == ["verdict-split"]
    assert sp.findings[0].message.startswith(
        "held in 2 of 3 (21-94 %) trusted repeats and collapsed in 1 of 3 (6-79 %)"
    )
    run = _run(*runs)
    run.repeat = 3  # no stored spreads: the report draws them from the measurements
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "| story-uwsgi-threads | 3 of 3 measured | 2 of 3 (21-94 %) | 1 of 3 (6-79 %) |" in md
    assert "| story-uwsgi-threads | 41.0 (29.0-59.0) |" in md
    assert "SPLIT" not in md
    assert "| story-uwsgi-threads \\#2 | collapsed |" in md
    assert (tmp_path / "story-uwsgi-threads-3.png").exists()


# --- Little's law's prediction ------------------------------------------------------------------
def test_the_incidents_own_numbers_tip_the_pool_at_2_13_s():
    from playground.incident.capacity import predict

    # 8 processes x 40 threads x 2 servers = 640 at 300 requests/s: full at 2.13 s.
    p = predict(workers=16, threads=40, upstream_s=2.0, rate=300, timeout_s=4)
    assert p.pool == 640 and p.capacity_per_s == 320 and not p.over and p.lasts_s is None
    assert p.tipping_delay_s == pytest.approx(2.1333, abs=1e-4)


def test_the_storys_pool_holds_at_2_s_and_lasts_about_9_s_at_2_5_s():
    from playground.incident.capacity import predict

    s = StorySettings()
    at_2 = predict(workers=2, threads=64, upstream_s=2.0, rate=s.rate, timeout_s=s.timeout)
    assert at_2.capacity_per_s == 64 and not at_2.over
    assert at_2.tipping_delay_s == pytest.approx(128 / 60)
    at_2_5 = predict(workers=2, threads=64, upstream_s=2.5, rate=60, timeout_s=4)
    # 51.2 answers/s against 60 arrivals: the backlog grows by 8.8/s; a user waits 2.5 s of
    # upstream plus backlog / 51.2, and gives up past 4 s: when the backlog passes 76.8.
    assert at_2_5.capacity_per_s == pytest.approx(51.2) and at_2_5.over
    assert at_2_5.lasts_s == pytest.approx(76.8 / 8.8)
    # An upstream slower than the users' patience loses every user at once.
    assert predict(workers=2, threads=64, upstream_s=5, rate=60, timeout_s=4).lasts_s == 0.0


def test_a_prediction_refuses_what_is_not_a_pool():
    from playground.incident.capacity import predict

    with pytest.raises(ValueError, match="needs a pool"):
        predict(workers=0, threads=64, upstream_s=2, rate=60, timeout_s=4)


# --- the independent check: oha and the generator on the same load ---------------------------
def test_oha_and_the_generator_read_the_same_load_the_same_way():
    """Recorded against one slow_api on 127.0.0.1 (0.2 s), 20 requests/s for 3 s, constant
    arrivals, no refreshes: `oha -q 20 -z 3s -w -c 200 --latency-correction --disable-keepalive
    -t 4s` and `openloop.py --rate 20 --duration 3 --arrival constant --timeout 4
    --no-refresh`."""
    import json

    from playground.core.tools.oha import oha_report
    from playground.story import crosscheck

    oha = crosscheck.oha_figures(
        oha_report((DATA / "oha_q20_z3s_200ms.json").read_text()), duration_s=3
    )
    output = analysis.generator_output(
        json.loads((DATA / "openloop_constant_20rps_3s_200ms.json").read_text())
    )
    ours = crosscheck.openloop_figures(output, duration_s=3)
    assert (oha.requests, oha.ok, ours.requests, ours.ok) == (60, 60, 60, 60)
    assert oha.goodput_per_s == ours.goodput_per_s == 20
    assert 0.2 <= oha.latency_p50_s < 0.21 and 0.2 <= ours.latency_p50_s < 0.21
    assert crosscheck.differences(ours, oha) == []
    # A disagreement is named: the same figures with half the answers gone.
    half = replace(oha, ok=30)
    assert crosscheck.differences(ours, half) == ["goodput 20.0/s (openloop) against 10.0/s (oha)"]


def test_an_oha_run_whose_every_request_timed_out_has_no_goodput_and_no_latency():
    from playground.core.tools.oha import oha_report
    from playground.core.tools.output import LoadOutputError
    from playground.story.crosscheck import oha_figures

    f = oha_figures(oha_report((DATA / "oha_q20_z3s_all_timeout.json").read_text()), duration_s=3)
    assert (f.ok, f.requests, f.errors) == (0, 60, {"timeout": 60})
    assert f.latency_p50_s is None and f.goodput_per_s == 0
    with pytest.raises(LoadOutputError, match="no JSON report"):
        oha_report("Error: connection refused")


def test_the_cross_check_offers_below_at_and_above_the_pools_capacity_and_is_reported(tmp_path):
    import json

    from playground.core.tools.oha import oha_report
    from playground.incident.storyresults import CrossCheck
    from playground.story import crosscheck

    # 2 x 64 threads at 2 s answer 64/s: half of it, all of it, half as much again.
    assert crosscheck.rates(pool=128, delay=2.0) == [32.0, 64.0, 96.0]
    oha = crosscheck.oha_figures(
        oha_report((DATA / "oha_q20_z3s_200ms.json").read_text()), duration_s=3
    )
    ours = crosscheck.openloop_figures(
        analysis.generator_output(
            json.loads((DATA / "openloop_constant_20rps_3s_200ms.json").read_text())
        ),
        duration_s=3,
    )
    run = _run()
    run.crosschecks = [
        CrossCheck(target="story-uwsgi-threads", rate=20, openloop=ours, oha=oha),
        CrossCheck(target="story-uwsgi-gevent", rate=20, error="oha printed no JSON report"),
    ]
    assert findings.failed(run) == ["story-uwsgi-gevent (cross-check at 20/s)"]
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "## The generator against oha" in md
    assert "| story-uwsgi-threads | 20 | 20.0 \\| 20.0 | 203 ms \\| 202 ms |" in md
    assert "error: oha printed no JSON report" in md


# --- the cliff ----------------------------------------------------------------------------------
def _steps(*points: tuple[float, float, bool]) -> list:
    from playground.incident.storyresults import SweepStep

    return [
        SweepStep(rate=r, offered_per_s=r, goodput_per_s=g, check=GeneratorCheck(valid=v))
        for r, g, v in points
    ]


def test_the_edge_is_the_lowest_rate_that_fell_and_an_untrusted_step_is_not_read():
    from playground.story import cliff

    steps = _steps((51.2, 51.0, True), (54.4, 54.0, True), (57.6, 40.0, False), (60.8, 30.0, True))
    assert cliff.edge(steps) == (60.8, 54.4)
    assert cliff.edge(_steps((51.2, 51.0, True))) == (None, 51.2)
    assert cliff.edge(_steps((51.2, 20.0, True))) == (51.2, None)


def test_the_sweep_goes_below_its_range_only_where_even_its_lowest_rate_fell():
    """Gunicorn's gthread over two processes fell at 80% of its prediction: the edge is lower
    down, so the cliff sweeps on below; where a rate held, or none fell, it does not."""
    from playground.story import cliff

    assert cliff.below_range(_steps((51.2, 26.5, True), (54.4, 25.4, True)))
    assert not cliff.below_range(_steps((51.2, 51.0, True), (54.4, 30.0, True)))
    assert not cliff.below_range(_steps((51.2, 51.0, True)))
    # An untrusted lowest step is not read: the lowest trusted one decides.
    assert not cliff.below_range(_steps((40.0, 10.0, False), (51.2, 51.0, True)))
    assert cliff.BELOW == tuple(sorted(cliff.BELOW, reverse=True)) and max(cliff.BELOW) < min(
        cliff.SHARES
    )


def test_the_cliff_says_how_far_the_prediction_is_from_the_edge(tmp_path):
    from playground.incident.capacity import predict
    from playground.incident.storyresults import Cliff, CliffTarget, DelayStep, SweepTarget
    from playground.story import cliff

    p = predict(workers=2, threads=64, upstream_s=2.0, rate=60, timeout_s=4)
    delays = [
        DelayStep(incident_delay=2.0, held=True, recovered=True, recovery_s=0.0, trusted=True),
        DelayStep(incident_delay=2.2, held=True, recovered=True, recovery_s=3.0, trusted=False),
        DelayStep(
            incident_delay=2.4,
            held=False,
            recovered=False,
            predicted_lasts_s=18.3,
            lasted_s=12.0,
            trusted=True,
        ),
    ]
    assert cliff.first_delay(delays, failed="held") == 2.4  # 2.2 is not trusted
    c = cliff.judge(
        CliffTarget(
            name="story-uwsgi-threads",
            prediction=p,
            rates=SweepTarget(name="story-uwsgi-threads", model="threads", capacity_per_s=64.0),
            edge_rate=60.8,
            held_rate=57.6,
            delays=delays,
            edge_delay=2.4,
            unrecovered_delay=2.4,
        )
    )
    codes = {f.code: f.figures["off"] for f in c.findings}
    # 64 predicted against 60.8 found: +5%, near; 2.13 s against 2.4 s: -11%, missed.
    assert codes["capacity-near"] == pytest.approx(64 / 60.8 - 1)
    assert codes["tipping-delay-missed"] == pytest.approx((128 / 60) / 2.4 - 1)
    run = _run()
    run.cliff = Cliff(delay=2.0, shares=[0.95, 1.0], delays=[2.0, 2.2, 2.4], targets=[c])
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "## The cliff, predicted and found" in md
    assert "| story-uwsgi-threads | 64.0 | 60.8 \\| 57.6 | +5% | 2.13 | 2.4 | -11% | 2.4 |" in md
    assert "| story-uwsgi-threads | 2.2 | held (INVALID) |" in md
    assert "18.3 s \\| 12 s" in md


def test_a_short_schedule_still_reads_the_normal_latency_before_the_incident():
    """5 s before the incident: the visits of its second half give the normal latency, not the
    one visit that arrived as the incident began (which took the incident's 2 s)."""
    attempts = [A(v, 1, 2.5 + 0.5 * v, 2.5 + 0.5 * v + 0.2) for v in range(5)]  # 2.5 .. 4.5
    attempts.append(A(5, 1, 5.0005, 7.01))
    rows = analysis.per_second(attempts, seconds=12)
    s = analysis.summarise(
        attempts=attempts,
        rows=rows,
        incident=analysis.Incident(start=5.001, seconds=4),
        arrivals_end=12,
        timeout=4,
    )
    assert s.normal_latency_s == pytest.approx(0.2)


# --- a recorded story run (tests/integration/test_story.py's, scrubbed) ----------------------
def _recorded(tmp_path: Path) -> Path:
    """The recorded run in a results folder of its own, as `playground story` left it."""
    import json

    data = json.loads((DATA / "story_results_recorded.json").read_text())
    run_dir = tmp_path / data["run_id"]
    run_dir.mkdir()
    (run_dir / "results.json").write_text(json.dumps(data))
    return run_dir


def test_a_recorded_story_run_reads_back_unchanged(tmp_path):
    import json

    from playground.commands import kinds

    run = kinds.load_run(_recorded(tmp_path))
    assert isinstance(run, StoryRun)
    assert run.to_json() == json.loads((DATA / "story_results_recorded.json").read_text())
    threads, gevent = (run.target(f"story-uwsgi-{m}") for m in ("threads", "gevent"))
    # The verdicts were decided when it was measured; reading them is all that is left.
    assert held.was_held(threads) is False and held.was_held(gevent) is True
    assert threads.closed_loop is not None and gevent.closed_loop is not None


def test_playground_report_and_compare_redraw_a_recorded_story_run(tmp_path, capsys):
    from playground import cli

    run_dir = _recorded(tmp_path)
    assert cli.main(["report", run_dir.name, "--results-dir", str(tmp_path)]) == 0
    md = (run_dir / "report.md").read_text()
    assert "| story-uwsgi-threads | collapsed, 1 of 1 (21-100 %) |" in md
    assert "| story-uwsgi-gevent | held, 1 of 1 (21-100 %) |" in md
    assert "## The same incident under a closed loop (ab)" in md
    assert (run_dir / "story-goodput.png").stat().st_size > 10_000
    capsys.readouterr()
    assert cli.main(["compare", run_dir.name, run_dir.name, "--results-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert shown.count("collapsed") == 2 and "story-uwsgi-gevent" in shown

"""The story's pure parts: its settings, what the servers report, the per-second series, the
summary and the report, on data whose answer is known."""

from __future__ import annotations

import pytest

from playground.story import analysis, report
from playground.story.plan import MODES, StoryError, StorySettings, openloop_args
from playground.story.run import analyse
from playground.story.serverside import (accept_queue, parse_access_log, stub_status_figures,
                                         uwsgi_figures)

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
@pytest.mark.parametrize(("change", "says"), [
    ({"rate": 0}, "rate must be above 0"),
    ({"timeout": -1}, "timeout must be above 0"),
    ({"incident_delay": 0.5}, "must be longer than the normal one"),
    ({"incident_delay": 90}, "at most 60 s"),
    ({"threads": 0}, "threads must be at least 1"),
    ({"before_s": -5}, "before_s must be 0 or more"),
])
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
    args = openloop_args(StorySettings(before_s=12, incident_s=30), out="/out/x.json")
    at = args[args.index("--at") + 1]
    assert at == "12:POST:http://slow_api:4000/control/slowdown?extra=1.3&seconds=30"
    assert args[args.index("--duration") + 1] == "82"
    assert args[args.index("--url") + 1] == "http://ingress:8080/?delay=0.7"


def test_every_mode_has_its_compose_file():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert {m.pool for m in MODES} == {"threads", "gevent"}
    for m in MODES:
        text = (root / m.compose_file).read_text()
        assert f"name: {m.project}" in text


# --- what the servers report --------------------------------------------------------------
def test_accept_queue_reads_the_listening_socket_of_the_port():
    assert accept_queue(NET_TCP, port=3000) == 17
    assert accept_queue(NET_TCP, port=1717) == 2
    assert accept_queue(NET_TCP, port=8080) is None


def test_uwsgi_figures_count_busy_workers_and_cores():
    stats = {"listen_queue": 7, "listen_queue_errors": 1, "workers": [
        {"status": "busy", "cores": [{"in_request": 1}, {"in_request": 0}, {"in_request": 1}]},
        {"status": "idle", "cores": [{"in_request": 0}]}]}
    assert uwsgi_figures(stats) == {"uwsgi_listen_queue": 7, "uwsgi_listen_queue_errors": 1,
                                    "busy_workers": 1, "busy_cores": 2, "cores": 4}


def test_stub_status_figures():
    assert stub_status_figures(STUB_STATUS) == {"nginx_active": 131, "nginx_reading": 0,
                                                "nginx_writing": 129, "nginx_waiting": 1}
    assert stub_status_figures("502 Bad Gateway") == {}


def test_access_log_lines():
    text = "1795433900.227 200 0.715 0.715\n1795433901.5 499 4.001 -\ngarbage\n"
    records = parse_access_log(text)
    assert [(r.status, r.request_time) for r in records] == [(200, 0.715), (499, 4.001)]


# --- the series -------------------------------------------------------------------------
def A(visit, attempt, intended, end, outcome="ok", status=200, sent=None):
    return analysis.Attempt(visit=visit, attempt=attempt, intended=intended,
                            sent=intended if sent is None else sent, end=end,
                            outcome=outcome, status=status if outcome != "timeout" else 0)


ATTEMPTS = [
    A(0, 1, 0.1, 0.8),
    A(1, 1, 0.5, 4.5, "timeout"), A(1, 2, 5.5, 6.2),
    A(2, 1, 1.2, 1.3, "status", 502), A(2, 2, 2.3, 6.3, "timeout"),
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
    assert [r["arrivals"] for r in rows[:4]] == [2, 1, 1, 0]
    assert rows[2]["refreshes"] == 1 and rows[5]["refreshes"] == 1 and rows[7]["refreshes"] == 1
    assert rows[0]["goodput"] == 1 and rows[4]["timeouts"] == 1 and rows[1]["errors"] == 1
    # At the end of second 3 (t=4): visit 1's first attempt and visit 2's second are in flight.
    assert rows[3]["in_flight"] == 2
    assert rows[0]["latency_p50"] == pytest.approx(0.7)


def test_the_adds_up_check_catches_a_lost_attempt():
    rows = analysis.per_second(ATTEMPTS, seconds=12)
    rows[4]["timeouts"] -= 1
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
    return {"columns": cols, "t0_monotonic": 100.0, "t0_wall": 1000.0,
            "check": {"valid": True, "reasons": []}, "loop": "uvloop",
            "events": [{"sent": 2.0, "at": 2.0, "status": 200}],
            "attempts": [[a.visit, a.attempt, a.intended, a.sent, a.end, a.outcome, a.status,
                          ""] for a in attempts]}


def test_analyse_lines_up_the_servers_and_the_access_log_with_the_attempts():
    settings = StorySettings(before_s=2, incident_s=4, after_s=6, timeout=4)
    samples = [{"monotonic": 103.4, "listen_queue": 9, "threads": 129}]
    access = "1004.5 499 4.0 -\n1000.8 200 0.7 0.7\n"
    entry = analyse(result=_result(ATTEMPTS), samples=samples, access_text=access,
                    settings=settings)
    assert entry["adds_up"] == []
    assert entry["seconds"][3]["listen_queue"] == 9
    assert entry["seconds"][4]["nginx_499"] == 1
    s = entry["summary"]
    assert s["visits"] == 4 and s["attempts"] == 7
    assert s["amplification"] == pytest.approx(7 / 4)
    assert s["wasted_499"] == 1 and s["peak_listen_queue"] == 9 and s["visits_never_served"] == 1


def test_report_writes_markdown_html_and_a_chart_per_mode(tmp_path):
    settings = StorySettings(before_s=2, incident_s=4, after_s=6, timeout=4)
    entry = analyse(result=_result(ATTEMPTS), samples=[], access_text="", settings=settings)
    data = {"settings": settings.as_dict(), "command": "playground story",
            "modes": [{"mode": "uwsgi-threads", "commands": ["docker compose up"], **entry},
                      {"mode": "uwsgi-gevent", "error": "did not become healthy"}]}
    paths = report.write_report(run_dir=tmp_path, data=data)
    md = (tmp_path / "story.md").read_text()
    assert "| uwsgi-threads | yes |" in md and "|---|" in md.split("| mode |")[1].splitlines()[1] and "error: did not become healthy" in md
    assert "![story-uwsgi-threads.png](story-uwsgi-threads.png)" in md
    assert (tmp_path / "story-uwsgi-threads.png").stat().st_size > 10_000
    assert "data:image/png;base64," in (tmp_path / "story.html").read_text()
    assert len(paths) == 3


@pytest.mark.parametrize(("argv", "says"), [
    (["--rate", "0"], "rate must be above 0"),
    (["--incident-delay", "0.1"], "must be longer than the normal one"),
    (["uwsgi-fibers"], "unknown mode 'uwsgi-fibers'"),
])
def test_story_command_refuses_bad_settings_before_touching_docker(capsys, argv, says):
    from playground import cli

    assert cli.main(["story", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err

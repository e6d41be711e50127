"""The fault runner's parts without Docker: the prober against real local servers, and the
figures it derives from a timeline of outcomes."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from playground.core.jsonmodel import from_json, to_json
from playground.core.tools.output import LoadResult
from playground.faults import analysis, render
from playground.faults.analysis import (
    longest_overlapping,
    phase_stats,
    settle_time,
    stuck_verdict,
    time_to_recover,
    timeline,
    unexpected_answers,
)
from playground.faults.containers import ServerState, compare_states
from playground.faults.overload import shed_summary
from playground.faults.probe import Outcome, Prober, burst, request_once
from playground.faults.render import render_markdown, write_report
from playground.faults.results import Burst, FaultsRun, OutageVerdict, PhaseStats
from tests.unit.conftest import free_port, serve_slow_api


# --- the prober, against real sockets ---------------------------------------------------------
def wait_for(done: Callable[[], bool], *, within_s: float = 10.0) -> None:
    """Until `done()`, polled; a test fails past `within_s` instead of hanging."""
    deadline = time.monotonic() + within_s
    while not done():
        assert time.monotonic() < deadline, f"not done within {within_s} s"
        time.sleep(0.02)


def most_in_flight(outcomes: list[Outcome]) -> int:
    """The most requests that were open at one moment, from their starts and times."""
    edges = sorted([(o.start, 1) for o in outcomes] + [(o.start + o.seconds, -1) for o in outcomes])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


class _Handler(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):
        delay = float(self.path.split("delay=")[1])
        time.sleep(delay)
        body = b"ok"
        self.send_response(type(self).status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server() -> Iterator[tuple[int, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"status": 200})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1], handler
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture()
def slamming_port() -> Iterator[int]:
    """Accepts, reads the request, and closes without a word."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    stop = threading.Event()

    def serve():
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            conn.recv(4096)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join(2)
    sock.close()


@pytest.mark.parametrize("delay", [0.00001, 0.5, 1e-9])
def test_probe_requests_write_the_delay_as_the_apps_accept_it(delay):
    """f"{0.00001:g}" is "1e-05", an exponent every app refuses with a 400: the prober must
    send a plain decimal, or a fault run at a small delay measures nothing but refusals."""
    import asyncio

    with serve_slow_api("faults_slow_api") as port:
        status, error = asyncio.run(
            request_once(host="127.0.0.1", port=port, delay=delay, timeout_s=10)
        )
    assert (status, error) == (200, None)


def test_prober_keeps_c_requests_in_flight_and_records_each(server):
    port, _ = server
    clock0 = time.monotonic()
    with Prober(
        host="127.0.0.1",
        port=port,
        concurrency=5,
        delay=0.2,
        timeout_s=5,
        clock=lambda: time.monotonic() - clock0,
    ) as prober:
        wait_for(lambda: len(prober.outcomes) >= 15)
        outcomes = prober.stop()
    # 5 clients, each sending again as its answer comes: 5 in flight, never more.
    assert len(outcomes) >= 15
    assert most_in_flight(outcomes) == 5
    assert {o.kind for o in outcomes} == {"200"}
    assert all(0.18 <= o.seconds < 1.0 for o in outcomes)
    assert outcomes == sorted(outcomes, key=lambda o: o.start)


def test_prober_delay_can_change_mid_run(server):
    port, _ = server
    clock0 = time.monotonic()
    with Prober(
        host="127.0.0.1",
        port=port,
        concurrency=2,
        delay=0.05,
        timeout_s=5,
        clock=lambda: time.monotonic() - clock0,
    ) as prober:
        wait_for(lambda: len(prober.outcomes) >= 2)
        prober.delay = 0.3
        wait_for(lambda: any(o.delay == 0.3 for o in prober.outcomes))
        outcomes = prober.stop()
    assert {o.delay for o in outcomes} == {0.05, 0.3}
    assert all(o.seconds >= 0.29 for o in outcomes if o.delay == 0.3)


@pytest.mark.parametrize(
    "fixture,kind", [("closed", "refused"), ("silent_port", "timeout"), ("slamming_port", "closed")]
)
def test_request_without_an_answer_says_why(request, fixture, kind):
    import asyncio

    port = free_port() if fixture == "closed" else request.getfixturevalue(fixture)
    started = time.monotonic()
    status, error = asyncio.run(request_once(host="127.0.0.1", port=port, delay=0, timeout_s=0.5))
    assert (status, error) == (None, kind)
    assert time.monotonic() - started < 2


def test_failures_are_paced_to_the_delay_not_a_retry_storm():
    clock0 = time.monotonic()
    with Prober(
        host="127.0.0.1",
        port=free_port(),
        concurrency=4,
        delay=0.25,
        timeout_s=1,
        clock=lambda: time.monotonic() - clock0,
    ) as prober:
        wait_for(lambda: len(prober.outcomes) >= 8)
        elapsed = time.monotonic() - clock0
        outcomes = prober.stop()
    # Refused in microseconds, but each client waits out the delay: ~4 per 0.25 s.
    assert {o.kind for o in outcomes} == {"refused"}
    assert len(outcomes) <= 4 * (elapsed / 0.25 + 2), (len(outcomes), elapsed)


def test_burst_sends_k_at_once(server):
    port, handler = server
    b = burst(host="127.0.0.1", port=port, k=10, delay=0.3, timeout_s=5)
    assert b.ok and b.kinds == {"200": 10}
    assert b.seconds < 1.5  # concurrently, not 10 x 0.3 s
    handler.status = 502
    assert burst(host="127.0.0.1", port=port, k=3, delay=0, timeout_s=5).kinds == {"502": 3}


# --- figures from a timeline ------------------------------------------------------------------
def o(start: float, seconds: float, kind: str | int = 200, delay: float = 1.0) -> Outcome:
    if isinstance(kind, int) or kind.isdigit():
        return Outcome(start=start, end=start + seconds, delay=delay, status=int(kind))
    return Outcome(start=start, end=start + seconds, delay=delay, error=kind)


OUTAGE = [
    o(0, 1),
    o(0.5, 1),
    o(1, 1),
    o(1.5, 1),  # normal
    o(2, 0.01, 502),
    o(2.5, 0.01, 502),
    o(3, 6.2, 504),
    o(3.5, 0.01, 502),  # down at 2..5
    o(5.2, 0.01, 502),
    o(5.6, 1),
    o(6, 1),
    o(6.5, 1),
]  # back at 5


def test_time_to_recover_is_from_the_return_to_the_last_failure():
    assert time_to_recover(OUTAGE, back_at=5.0) == pytest.approx(0.6)
    assert time_to_recover(OUTAGE, back_at=5.3) == 0.0  # nothing failed after
    assert time_to_recover(OUTAGE[:9], back_at=5.0) is None  # last one still failing


def test_no_request_after_the_return_measures_no_recovery():
    """Nothing started after the upstream came back: no evidence of a recovery, so no figure
    (not 0 s), and the report says "not measured", not "recovered" nor "not recovered"."""
    assert time_to_recover(OUTAGE, back_at=7.0) is None
    assert analysis.started_after(OUTAGE, back_at=7.0) == 0
    assert analysis.started_after(OUTAGE, back_at=5.0) == 4
    assert render.recovery(OutageVerdict(requests_after_return=0)) == "not measured"
    assert render.recovery(OutageVerdict(requests_after_return=4)) == "not recovered"
    assert render.recovery(OutageVerdict(recover_s=0.0, requests_after_return=4)) == "0.00 s"
    # A record from before the count was kept: not recovered, as it always read.
    assert render.recovery(from_json(OutageVerdict, {"recover_s": None}, "t")) == "not recovered"


def test_longest_answer_counts_requests_in_flight_during_the_outage():
    assert longest_overlapping(OUTAGE, start=2.0, end=5.0) == pytest.approx(6.2)
    assert longest_overlapping(OUTAGE, start=9.5, end=20) is None


def test_phase_stats_by_start_time():
    during = phase_stats(OUTAGE, start=2.0, end=5.0)
    assert during.requests == 4
    assert during.kinds == {"502": 3, "504": 1}
    assert during.p50_s is None and during.longest_s == pytest.approx(6.2)
    before = phase_stats(OUTAGE, start=0.0, end=2.0)
    assert before.kinds == {"200": 4} and before.p50_s == pytest.approx(1.0)
    assert before.excess_p50_s == pytest.approx(0.0)
    # faults.json keeps the same figures under the same keys, in the same order.
    assert list(to_json(before)) == [
        "from_s",
        "to_s",
        "requests",
        "kinds",
        "p50_s",
        "p90_s",
        "max_s",
        "excess_p50_s",
        "excess_max_s",
        "ok_rps",
        "longest_s",
    ]
    assert to_json(before)["kinds"] == {"200": 4} and to_json(before)["from_s"] == 0.0


def test_timeline_counts_answers_by_the_second_they_arrived():
    rows = timeline(OUTAGE)
    assert rows[0] == {"t": 1.0, "200": 2}  # ended at 1.0 and 1.5
    assert {"t": 5.0, "502": 1} in rows
    assert sum(n for r in rows for k, n in r.items() if k != "t") == len(OUTAGE)


def test_settle_time_after_a_slowdown():
    run = [o(0, 1), o(1, 5, delay=5), o(2, 5, delay=5), o(6, 3.5), o(7, 1.1), o(8, 1)]
    assert settle_time(run, since=6.0, limit_s=1.5) == pytest.approx(1.0)
    assert settle_time(run, since=7.0, limit_s=1.5) == 0.0
    assert settle_time(run[:4], since=6.0, limit_s=1.5) is None


def test_stuck_workers_show_as_a_slower_burst():
    before = Burst(k=200, delay=1, kinds={"200": 200}, seconds=1.2)
    assert stuck_verdict(before=before, after=before)[0] is False
    slower = Burst(k=200, delay=1, kinds={"200": 200}, seconds=2.3)
    assert stuck_verdict(before=before, after=slower)[0] is False  # within 1.5x + 2 s
    lost = Burst(k=200, delay=1, kinds={"200": 200}, seconds=4.5)
    stuck, why = stuck_verdict(before=before, after=lost)
    assert stuck and "capacity lost" in why
    failing = Burst(k=200, delay=1, kinds={"200": 150, "timeout": 50}, seconds=1.2)
    assert stuck_verdict(before=before, after=failing)[0] is True


def state(**kw) -> ServerState:
    base = dict(
        service="app",
        container="c1",
        status="running",
        started_at="t1",
        restarts=0,
        oom_killed=False,
        processes=((10, "gunicorn: master"), (11, "gunicorn: worker")),
    )
    return ServerState(**{**base, **kw})


def test_compare_states_catches_restarts_and_crashed_workers():
    def problems(after: ServerState) -> list[str]:
        return list(compare_states(before=state(), after=after).problems)

    assert problems(state()) == []
    respawned = state(processes=((10, "gunicorn: master"), (12, "gunicorn: worker")))
    assert "lost 1 server process" in problems(respawned)[0]
    assert "restarted" in problems(state(started_at="t2"))[0]
    assert "is exited" in problems(state(status="exited"))[0]


def ab_result(**kw) -> LoadResult:
    base = dict(
        tool="ab",
        complete=6000,
        failed=0,
        failures={"connect": 0, "receive": 0, "length": 0, "exceptions": 0},
        non_2xx=0,
        time_taken_s=20,
        rps=300,
        latency_ms={"p50": 1050, "p90": 1100, "p99": 1200, "max": 1300},
        connect_max_ms=5,
        steady_rps=None,
        mean_latency_ms=None,
    )
    return LoadResult(**{**base, **kw})


def test_shed_summary_names_where_the_load_went():
    probe = PhaseStats(from_s=0.0, to_s=20.0, requests=10, kinds={"200": 10}, p50_s=1.0)
    calm = shed_summary(ab=ab_result(), ab_error=None, probe=probe, delay=1, concurrency=2000)
    assert calm[0].startswith("nothing shed")
    queued = shed_summary(
        ab=ab_result(
            latency_ms={"p50": 6900, "p90": 13000, "p99": 16400, "max": 17000},
            connect_max_ms=3100,
            failures={"connect": 3, "receive": 7, "length": 0, "exceptions": 0},
            failed=10,
        ),
        ab_error=None,
        probe=PhaseStats(
            from_s=0.0, to_s=20.0, requests=7, kinds={"200": 5, "timeout": 2}, p50_s=5.0
        ),
        delay=1,
        concurrency=2000,
    )
    text = " | ".join(queued)
    for words in (
        "3 connections refused",
        "7 connections reset",
        "listen queue overflowed",
        "queueing: median 6.9 s",
        "'timeout': 2",
        "waited 5.0 s",
    ):
        assert words in text, (words, text)


def test_unexpected_answers_flag_500_not_the_documented_errors():
    assert unexpected_answers({"200": 5, "502": 3, "504": 1, "timeout": 2}) == []
    assert unexpected_answers({"500": 1}) == ["1 x HTTP 500 (undocumented answer)"]


def test_markdown_report_and_problem_list(tmp_path):
    target = {
        "name": "gunicorn-threads",
        "concurrency": 20,
        "kinds": {"200": 10, "502": 5},
        "phases": {"during": {"kinds": {"502": 5}}},
        "longest_while_down_s": 0.02,
        "answer_bound_s": 6.0,
        "recover_s": 0.4,
        "stuck": False,
        "stuck_reason": "burst of 200 x 1 s: 1.2 s before, 1.2 s after",
        "problems": [],
        "notes": [],
        "timeline": [{"t": 3.0, "200": 20}, {"t": 4.0, "200": 3, "502": 17}],
    }
    data = {
        "schema_version": 1,
        "run_id": "r1",
        "command": "playground faults",
        "finished_at": "x",
        "settings": {"delay": 1.0},
        "runs": [
            {
                "fault": "upstream-outage",
                "compose_file": "sync-gunicorn.yml",
                "stopped_service": "slow_api",
                "error": None,
                "targets": [target],
                "marks": [{"t": 1.0, "label": "stop slow_api"}],
                "commands": ["docker compose -f sync-gunicorn.yml stop slow_api"],
            },
            {
                "fault": "db-outage",
                "compose_file": "bonus-psycopg2-gevent.yml",
                "error": "did not become healthy",
                "targets": [],
            },
        ],
    }
    run = FaultsRun.from_json(data)
    path = write_report(run_dir=tmp_path, run=run)
    text = path.read_text()
    row = "| gunicorn-threads | 20 | 200: 10, 502: 5 | 502: 5 | 0.02 s (6 s) | 0.40 s | no | ok |"
    assert row in text
    assert "docker compose -f sync-gunicorn.yml stop slow_api" in text
    assert "      4 s  200:3 502:17" in text
    assert "Could not run: did not become healthy" in text
    assert run.problems() == ["db-outage bonus-psycopg2-gevent.yml: did not become healthy"]


def test_the_faults_report_is_built_on_the_reports_document_model():
    """One Markdown writer for every report: faults.md is blocks of the report's model (so a
    pipe in a problem cannot break a table row), not a table builder of its own."""
    from playground.faults.render import document
    from playground.report import Span, Table

    target = {
        "name": "gevent-pywsgi",
        "concurrency": 5,
        "ab": {"error": "no | report"},
        "shed": ["ab printed no report"],
        "drain_s": 1.0,
        "drain_answer": "200",
        "stuck": False,
        "stuck_reason": "ok",
        "problems": ["a | b"],
        "timeline": [],
    }
    data = {
        "schema_version": 1,
        "run_id": "r",
        "finished_at": "x",
        "runs": [
            {
                "fault": "overload",
                "compose_file": "async-gevent-pywsgi.yml",
                "error": None,
                "targets": [target],
            }
        ],
    }
    run = FaultsRun.from_json(data)
    tables = [b for b in document(run) if isinstance(b, Table)]
    assert len(tables) == 1 and tables[0].rows[0][-1] == Span("a | b", bold=True)
    row = next(
        line for line in render_markdown(run).splitlines() if line.startswith("| gevent-pywsgi")
    )
    assert row.count(" | ") == len(tables[0].headers) - 1, row  # escaped pipes split nothing

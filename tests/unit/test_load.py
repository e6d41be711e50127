"""Tests for playground.core.load: commands, parsing real ab/wrk output, Little's law, notes, errors.

Every ``tests/data/ab_*`` and ``tests/data/wrk_*`` file is real output, captured on Linux with
ApacheBench 2.3 (apache2-utils 2.4.71) and wrk 4.1.0 from short runs against little stdlib
servers on 127.0.0.1 (``ThreadingHTTPServer`` unless noted, sleeping a fixed delay per request):

=========================================== ==========================================================
file (``.txt`` = stdout, unless ``combined``) what produced it / what it demonstrates
=========================================== ==========================================================
ab_clean_n41_c10_200ms (+ .tsv)              ``ab -r -n 41 -c 10 -s 5 -g``, 0.2 s server: a clean run
ab_ramp_first_slowest_n41_c10 (+ .tsv)       request 1 sleeps 0.5 s, request k max(0.05, 0.4-0.008k):
                                             the -g rows are sorted by ttime, not in completion order
ab_lone_first_n20_c10_200ms / _n10_c10_      ``-n 20 -c 10`` takes 0.6 s, ``-n 10 -c 10`` 0.4 s: ab sends
                                             its first request alone (ab_cap_rps)
ab_http500_every4th_n40_c4                   every 4th request -> 500 with a longer body: Non-2xx 10 and
                                             Length failures 10
ab_rst_and_fin_n40_c4                        raw server: every 5th connection RST, every 7th closed (FIN)
                                             unanswered. One early RST made ab take 0 bytes as the
                                             document length, so 27 good answers count as Length failures
ab_rst_late_n40_c4                           RSTs only, from the 10th connection: each RST counted three
                                             times (Receive 7, Length 7, Exceptions 7)
ab_refused_with_r_n20_c2                     ``ab -r`` against a closed port: exit 0, "Complete requests:
                                             20", "Failed requests: 30", 93896.71 requests/s
ab_refused_without_r_n20_c2 (+ .stderr.txt)  the same without -r: exit 111, no report
ab_refused_without_r_combined                the same with ``2>&1``: the error is glued to
                                             "Benchmarking ... (be patient)..."
ab_listen1_threaded_syn_retransmit_n40_c20   threaded server with listen(1), ``-n 40 -c 20``: Connect max
  (+ .tsv)                                   1014 ms (a SYN retransmitted) and a 14.5 s tail
ab_listen1_single_syn_retransmit_n20_c10     single-threaded server, listen(1), 0.1 s: Connect max 1015 ms
ab_listen1_single_backoff_n12_c12 (+ .tsv)   single-threaded, listen(1), 1 s: 12 requests take 34.9 s
ab_listen1_threaded_stall_timeout_n40_c20    same as the 1014 ms run, another time: ab stalled, its
  (+ .stderr.txt)                            ``-s 10`` expired, exit 119, no report
ab_progress_combined_n400_c20                ``-n 400`` with ``2>&1``: "Completed 100 requests" lines mixed in
ab_usage_n1_c2_combined                      ``ab -n 1 -c 2`` with ``2>&1``: refused arguments, exit 22
ab_version_V                                 ``ab -V``
ab_idle_close_n20_c20_3s / _n80_ (+ .tsv)    asyncio server answering after 3 s that closes a connection
                                             which sent no request within 1 s, ``ab -r -s 10 -g``: ab
                                             opens one connection more than it writes requests on
                                             (``-n`` a multiple of ``-c``), the server closes it idle,
                                             ab counts a Length failure; its -g record keeps the
                                             previous request's wait (3007 ms) against a ttime of 1003
ab_idle_close_n21_c20_3s / _n81_ (+ .tsv)    the same with ``-n`` = rounds x c + 1: no connection left over
ab_c10000_uwsgi_gevent_every40th (+ .tsv)    the runner's record of ``ab -r -n 40001 -c 10000 -s 264 -g``
                                             against uWSGI gevent with its scale override (run
                                             20261123-182404; stdout, then ab's stderr), and every
                                             40th row of its -g file: Connect max 2874 ms, the slow
                                             connects climbing in steps of at most 564 ms
wrk_clean_c10_d2s_200ms                      ``wrk --latency -t 2 -c 10 -d 2s --timeout 5s``, 0.2 s server
wrk_fast_c4_d1s                              raw keep-alive responder: latencies in us, Req/Sec in k
wrk_http500_timeout_c8_d3s                   every 4th -> 500, every 5th sleeps 3 s, ``--timeout 1s``:
                                             "Non-2xx or 3xx responses: 8", "timeout 1"
wrk_http500_slow3s_c8_d4s                    the same server with ``--timeout 5s``: latencies in seconds
wrk_rst_read_errors_c4_d1s                   RST server: "Socket errors: ... read 85"
wrk_all_timeout_c2_d2s_3s                    3 s server, ``-d 2s --timeout 1s``: 0 requests, no errors
wrk_refused_c4_d1s.stderr.txt                closed port: exit 1, stdout empty
wrk_usage_t2_c1_combined                     ``wrk -t 2 -c 1`` with ``2>&1``: refused arguments
wrk_version_v                                ``wrk -v`` (stdout; exit 1)
=========================================== ==========================================================
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.bench.diagnosis import load_findings
from playground.core.load import TOOLS, ideal_rps, tool_version
from playground.core.tools.ab import ab_cap_rps, ab_requests
from playground.core.tools.abreport import AbTool
from playground.core.tools.abrequests import ab_rows, ab_unwritten, steady_rps_from_ab
from playground.core.tools.output import LoadOutputError, LoadResult
from playground.core.tools.wrk import WrkTool

DATA = Path(__file__).resolve().parents[1] / "data"


def diagnose(**kwargs) -> list[str]:
    """The messages of the load tool's findings (see playground.bench.diagnosis)."""
    return [f.message for f in load_findings(**kwargs)]


TSV_HEADER = "starttime\tseconds\tctime\tdtime\tttime\twait"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def parse_ab(name: str, *, concurrency: int = 10, tsv: str | None = None) -> LoadResult:
    return AbTool().parse(
        stdout=read(name), per_request=read(tsv) if tsv else None, concurrency=concurrency
    )


def parse_wrk(name: str, *, concurrency: int = 10) -> LoadResult:
    return WrkTool().parse(stdout=read(name), per_request=None, concurrency=concurrency)


def tsv(*ttimes: float) -> str:
    """A -g file in ab's layout with the given ttime column (other columns differ on purpose)."""
    rows = [
        f"Sun Nov 22 10:45:55 2026\t1795344355\t{i}\t{t}\t{t}\t{t + 1000}"
        for i, t in enumerate(ttimes)
    ]
    return "\n".join([TSV_HEADER, *rows]) + "\n"


# ---- ab: every captured report, figure by figure -------------------------------------------------

# file: (complete, failed, (connect, receive, length, exceptions), non_2xx, time_taken_s, rps,
#        (p50, p90, p99, max), connect_max_ms)
AB_REPORTS = {
    "ab_clean_n41_c10_200ms.txt": (41, 0, (0, 0, 0, 0), 0, 1.016, 40.34, (201, 208, 210, 210), 0),
    "ab_ramp_first_slowest_n41_c10.txt": (41, 0, (0, 0, 0, 0), 0, 1.420, 28.88, (233, 365, 502, 502), 1),
    "ab_lone_first_n20_c10_200ms.txt": (20, 0, (0, 0, 0, 0), 0, 0.615, 32.54, (203, 210, 210, 210), 1),
    "ab_lone_first_n10_c10_200ms.txt": (10, 0, (0, 0, 0, 0), 0, 0.430, 23.27, (215, 227, 227, 227), 2),
    "ab_http500_every4th_n40_c4.txt": (40, 10, (0, 0, 10, 0), 10, 0.569, 70.35, (51, 53, 57, 57), 3),
    "ab_rst_and_fin_n40_c4.txt": (40, 43, (0, 8, 27, 8), 0, 0.407, 98.28, (51, 51, 51, 51), 1),
    "ab_rst_late_n40_c4.txt": (40, 21, (0, 7, 7, 7), 0, 0.459, 87.08, (51, 51, 52, 52), 0),
    "ab_refused_with_r_n20_c2.txt": (20, 30, (0, 20, 0, 10), 0, 0.0, 93896.71, (0, 0, 0, 0), 0),
    "ab_listen1_threaded_syn_retransmit_n40_c20.txt": (
        40, 0, (0, 0, 0, 0), 0, 14.729, 2.72, (202, 7871, 14527, 14527), 1014),
    "ab_listen1_single_syn_retransmit_n20_c10.txt": (
        20, 0, (0, 0, 0, 0), 0, 5.253, 3.81, (204, 2821, 5148, 5148), 1015),
    "ab_listen1_single_backoff_n12_c12.txt": (
        12, 0, (0, 0, 0, 0), 0, 34.869, 0.34, (7500, 32867, 33868, 33868), 1018),
    "ab_progress_combined_n400_c20.txt": (400, 0, (0, 0, 0, 0), 0, 0.211, 1895.94, (9, 16, 28, 28), 0),
    "ab_idle_close_n20_c20_3s.txt": (20, 1, (0, 0, 1, 0), 0, 6.024, 3.32, (3010, 3010, 3014, 3014), 1),
    "ab_idle_close_n21_c20_3s.txt": (21, 0, (0, 0, 0, 0), 0, 6.043, 3.48, (3025, 3025, 3026, 3026), 13),
    "ab_idle_close_n80_c20_3s.txt": (80, 1, (0, 0, 1, 0), 0, 15.061, 5.31, (3009, 3027, 3030, 3030), 19),
    "ab_idle_close_n81_c20_3s.txt": (81, 0, (0, 0, 0, 0), 0, 15.130, 5.35, (3021, 3052, 3053, 3053), 16),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(AB_REPORTS))
def test_ab_report_figures(name: str) -> None:
    complete, failed, kinds, non_2xx, taken, rps, (p50, p90, p99, top), connect = AB_REPORTS[name]
    r = parse_ab(name)
    assert r.tool == "ab"
    assert r.complete == complete
    assert r.failed == failed
    assert r.failures == dict(
        zip(("connect", "receive", "length", "exceptions"), kinds, strict=True)
    )
    assert r.non_2xx == non_2xx
    assert r.time_taken_s == pytest.approx(taken)
    assert r.rps == pytest.approx(rps)
    assert r.latency_ms == {"p50": p50, "p90": p90, "p99": p99, "max": top}
    assert r.connect_max_ms == connect
    # Without the -g data ab gives no per-request times, so there is no steady rate.
    assert r.steady_rps is None and r.mean_latency_ms is None


def test_ab_failed_can_exceed_complete_because_ab_counts_events() -> None:
    # Real quirk, kept visible: the figures do not add up to a number of requests.
    refused = parse_ab("ab_refused_with_r_n20_c2.txt")
    assert refused.failed > refused.complete
    assert sum(refused.failures.values()) == refused.failed
    late = parse_ab("ab_rst_late_n40_c4.txt")
    assert late.failures["receive"] == late.failures["length"] == late.failures["exceptions"] == 7


def test_ab_parse_with_per_request_data_fills_steady_figures() -> None:
    r = parse_ab("ab_clean_n41_c10_200ms.txt", concurrency=10, tsv="ab_clean_n41_c10_200ms.tsv")
    # 41 rows whose ttime sums to 8286 ms (checked with awk): mean 202.098 ms.
    assert r.mean_latency_ms == pytest.approx(8286 / 41)
    assert r.steady_rps == pytest.approx(10 / (8286 / 41 / 1000))
    # The other figures are still the report's own.
    assert r.rps == pytest.approx(40.34)


# ---- ab's surplus connection: opened, never written, closed idle by the server ----------------


@pytest.mark.parametrize(
    ("txt", "tsv_name", "unwritten"),
    [
        ("ab_idle_close_n20_c20_3s.txt", "ab_idle_close_n20_c20_3s.tsv", 1),
        ("ab_idle_close_n80_c20_3s.txt", "ab_idle_close_n80_c20_3s.tsv", 1),
        ("ab_idle_close_n21_c20_3s.txt", "ab_idle_close_n21_c20_3s.tsv", 0),
        ("ab_idle_close_n81_c20_3s.txt", "ab_idle_close_n81_c20_3s.tsv", 0),
    ],
)
def test_ab_unwritten_connections_are_found_in_the_g_file(
    txt: str, tsv_name: str, unwritten: int
) -> None:
    """With -n a multiple of -c the server closed one idle connection that ab counted as a
    Length failure; with one request more there was none."""
    r = parse_ab(txt, concurrency=20, tsv=tsv_name)
    assert r.unwritten == unwritten
    assert r.failures["length"] == unwritten
    assert ab_unwritten(ab_rows(read(tsv_name))) == unwritten


def test_an_unwritten_record_keeps_the_previous_requests_wait() -> None:
    """The record ab left: connect 0 (clamped), total = the server's 1 s idle wait, wait = the
    previous request's 3 s on the same slot, which no written request can show."""
    odd = [r for r in rows("ab_idle_close_n20_c20_3s.tsv") if float(r[5]) > float(r[4])]
    assert len(odd) == 1
    ctime, ttime, wait = (int(odd[0][i]) for i in (2, 4, 5))
    assert ctime == 0
    assert 900 <= ttime <= 1500
    assert 2900 <= wait <= 3500


def test_ab_unwritten_counts_rows_whose_wait_exceeds_their_total() -> None:
    data = (
        "\n".join(
            [
                TSV_HEADER,
                "Mon\t1\t0\t1003\t1003\t3007",
                "Mon\t1\t1\t3000\t3001\t2998",
                "Mon\t1\t0\t0\t0\t0",
            ]
        )
        + "\n"
    )
    assert ab_unwritten(ab_rows(data)) == 1
    assert ab_unwritten(ab_rows(TSV_HEADER + "\n")) == 0
    with pytest.raises(LoadOutputError, match="wait"):
        ab_rows("starttime\tseconds\tctime\tdtime\tttime\nMon\t1\t0\t1\t1\n")


def test_ab_requests_fills_every_round_after_the_lone_first() -> None:
    assert ab_requests(rounds=1, concurrency=20) == 21
    assert ab_requests(rounds=4, concurrency=10000) == 40001
    # ab runs 1 + ceil((n - 1) / c) rounds: exactly the lone first plus the rounds asked for.
    n = ab_requests(rounds=4, concurrency=20)
    assert 1 + math.ceil((n - 1) / 20) == 5
    with pytest.raises(ValueError):
        ab_requests(rounds=0, concurrency=20)


# ---- ab -g data: what the file is, and Little's law on it ----------------------------------------


def rows(name: str) -> list[list[str]]:
    return [line.split("\t") for line in read(name).splitlines()[1:] if line]


def test_ab_g_file_is_sorted_by_ttime_not_completion_order() -> None:
    """The ramp server made request 1 the slowest (0.5 s) and later ones ever faster.

    In completion order the 502 ms request would come first; ab wrote it near the end, because
    it sorts its samples by total time before writing the file. The lone first request is the
    one row that started a second earlier than all others.
    """
    data = rows("ab_ramp_first_slowest_n41_c10.tsv")
    assert len(data) == 41
    ttimes = [int(r[4]) for r in data]
    assert ttimes == sorted(ttimes)
    assert ttimes[0] == 73 and ttimes[-1] == 502
    earliest = min(int(r[1]) for r in data)
    first = [r for r in data if int(r[1]) == earliest]
    assert len(first) == 1 and int(first[0][4]) == 502
    assert data.index(first[0]) == len(data) - 1


@pytest.mark.parametrize(
    "name", ["ab_clean_n41_c10_200ms.tsv", "ab_listen1_threaded_syn_retransmit_n40_c20.tsv"]
)
def test_ab_g_files_have_sorted_ttime_column(name: str) -> None:
    ttimes = [int(r[4]) for r in rows(name)]
    assert ttimes == sorted(ttimes)


def test_steady_rps_on_clean_capture_is_close_to_c_over_delay() -> None:
    steady, mean = steady_rps_from_ab(
        rows=ab_rows(read("ab_clean_n41_c10_200ms.tsv")), concurrency=10
    )
    # The file's own ttime column (read as plain TSV, not by ab_rows) and the response-time law.
    ttimes = [int(r[4]) for r in rows("ab_clean_n41_c10_200ms.tsv")]
    assert mean == pytest.approx(sum(ttimes) / len(ttimes), rel=1e-9)
    assert steady == pytest.approx(10 / (mean / 1000), rel=1e-9)
    # Within 2% of the ideal 10 / 0.2 s = 50/s, while ab's own figure (40.34/s) is 19% below.
    assert steady == pytest.approx(ideal_rps(concurrency=10, delay=0.2), rel=0.02)


def test_steady_rps_on_captures_with_a_stalled_tail() -> None:
    steady, mean = steady_rps_from_ab(
        rows=ab_rows(read("ab_listen1_threaded_syn_retransmit_n40_c20.tsv")), concurrency=20
    )
    assert mean == pytest.approx(78137 / 40)
    assert steady == pytest.approx(20 / (78137 / 40 / 1000))
    steady, mean = steady_rps_from_ab(
        rows=ab_rows(read("ab_listen1_single_backoff_n12_c12.tsv")), concurrency=12
    )
    assert mean == pytest.approx(130143 / 12)
    assert steady == pytest.approx(12 / (130143 / 12 / 1000))


def test_steady_rps_math_on_synthetic_rows() -> None:
    # Three connections, response times 100/200/300 ms: R = 0.2 s, X = c / R = 15/s.
    steady, mean = steady_rps_from_ab(rows=ab_rows(tsv(100, 200, 300)), concurrency=3)
    assert (steady, mean) == (pytest.approx(15.0), 200.0)
    # It reads the ttime column by name: the wait column (ttime + 1000) must not leak in.
    assert steady_rps_from_ab(rows=ab_rows(tsv(50, 50)), concurrency=1) == (
        pytest.approx(20.0),
        50.0,
    )
    # Every row counts, including the one that would be ab's lone first request.
    steady, mean = steady_rps_from_ab(rows=ab_rows(tsv(1000, 1000, 1000, 4000)), concurrency=4)
    assert mean == 1750.0
    assert steady == pytest.approx(4 / 1.75)


def test_steady_rps_needs_two_rows() -> None:
    assert steady_rps_from_ab(rows=ab_rows(tsv(200)), concurrency=10) == (None, None)
    assert steady_rps_from_ab(rows=ab_rows(TSV_HEADER + "\n"), concurrency=10) == (None, None)
    assert steady_rps_from_ab(rows=ab_rows(""), concurrency=10) == (None, None)


def test_steady_rps_when_every_request_took_zero_ms() -> None:
    # ab against a closed port with -r records its failures with 0 ms: no rate can follow.
    assert steady_rps_from_ab(rows=ab_rows(tsv(0, 0, 0)), concurrency=2) == (None, 0.0)


def test_steady_rps_rejects_malformed_data() -> None:
    with pytest.raises(LoadOutputError, match="ttime"):
        ab_rows("a\tb\tc\n1\t2\t3\n4\t5\t6\n")
    with pytest.raises(LoadOutputError, match="line 3"):
        bad = TSV_HEADER + "\nx\t1\t0\t5\t5\t5\nx\t1\t0\t5\tnan?\t5\n"
        steady_rps_from_ab(rows=ab_rows(bad), concurrency=2)
    with pytest.raises(ValueError, match="concurrency"):
        steady_rps_from_ab(rows=ab_rows(tsv(1, 2)), concurrency=0)


@given(
    ttimes=st.lists(st.integers(min_value=1, max_value=60_000), min_size=2, max_size=200),
    concurrency=st.integers(min_value=1, max_value=20_000),
)
def test_steady_rps_is_the_response_time_law(ttimes: list[int], concurrency: int) -> None:
    steady, mean = steady_rps_from_ab(rows=ab_rows(tsv(*ttimes)), concurrency=concurrency)
    assert mean == pytest.approx(sum(ttimes) / len(ttimes))
    assert steady is not None
    assert steady * mean / 1000 == pytest.approx(concurrency)  # X * R = N


# ---- ab: throughput ceilings ---------------------------------------------------------------------


def test_ab_cap_rps_examples() -> None:
    assert ab_cap_rps(requests=2000, concurrency=200, delay=1) == pytest.approx(2000 / 11)
    assert ab_cap_rps(requests=2000, concurrency=200, delay=1) == pytest.approx(181.82, abs=0.01)
    assert ab_cap_rps(requests=10, concurrency=5, delay=1) == pytest.approx(3.33, abs=0.01)
    assert ab_cap_rps(requests=10, concurrency=5, delay=0) is None


def test_ab_cap_rps_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        ab_cap_rps(requests=0, concurrency=5, delay=1)
    with pytest.raises(ValueError):
        ab_cap_rps(requests=10, concurrency=0, delay=1)
    with pytest.raises(ValueError):
        ab_cap_rps(requests=10, concurrency=5, delay=-1)


@pytest.mark.parametrize(
    ("name", "requests", "concurrency"),
    [("ab_lone_first_n20_c10_200ms.txt", 20, 10), ("ab_lone_first_n10_c10_200ms.txt", 10, 10)],
)
def test_ab_cap_rps_matches_real_runs(name: str, requests: int, concurrency: int) -> None:
    """ab's own figure sits just under the cap; had it opened all c connections at once, the
    n=20 run would have reached 20 / (2 x 0.2 s) = 50/s, not 32.54/s."""
    r = parse_ab(name)
    cap = ab_cap_rps(requests=requests, concurrency=concurrency, delay=0.2)
    assert cap is not None
    assert 0.9 * cap <= r.rps <= cap
    assert r.time_taken_s == pytest.approx((requests / concurrency + 1) * 0.2, rel=0.1)


def test_ideal_rps() -> None:
    assert ideal_rps(concurrency=10, delay=0.2) == pytest.approx(50.0)
    assert ideal_rps(concurrency=200, delay=1) == 200.0
    assert ideal_rps(concurrency=10, delay=0) is None
    with pytest.raises(ValueError):
        ideal_rps(concurrency=0, delay=1)


@given(
    requests=st.integers(min_value=1, max_value=10**6),
    concurrency=st.integers(min_value=1, max_value=20_000),
    delay=st.floats(min_value=0.001, max_value=100),
)
def test_ab_cap_is_always_below_ideal(requests: int, concurrency: int, delay: float) -> None:
    cap = ab_cap_rps(requests=requests, concurrency=concurrency, delay=delay)
    ideal = ideal_rps(concurrency=concurrency, delay=delay)
    assert cap is not None and ideal is not None
    assert cap < ideal


# ---- commands ------------------------------------------------------------------------------------

URL = "http://app:8000/?delay=0.2"


def ab_argv(**overrides: object) -> list[str]:
    kwargs: dict = {"url": URL, "requests": 2000, "concurrency": 200, "timeout_s": 30.0,
                    "duration_s": 10.0, "per_request_path": None}  # fmt: skip
    kwargs.update(overrides)
    return AbTool().command(**kwargs)


def wrk_argv(**overrides: object) -> list[str]:
    kwargs: dict = {"url": URL, "requests": 2000, "concurrency": 200, "timeout_s": 30.0,
                    "duration_s": 10.0, "per_request_path": None}  # fmt: skip
    kwargs.update(overrides)
    return WrkTool().command(**kwargs)


def test_ab_command() -> None:
    assert ab_argv() == ["ab", "-r", "-n", "2000", "-c", "200", "-s", "30", URL]
    assert ab_argv(per_request_path="/out/x.tsv") == [
        "ab", "-r", "-n", "2000", "-c", "200", "-s", "30", "-g", "/out/x.tsv", URL]  # fmt: skip
    # ab reads -s with atoi: fractions are rounded up to whole seconds.
    assert ab_argv(timeout_s=2.5)[7] == "3"
    # ab is bound by the request count: the duration changes nothing.
    assert ab_argv(duration_s=99) == ab_argv()
    assert ab_argv(requests=20000, concurrency=20000)[:6] == [
        "ab",
        "-r",
        "-n",
        "20000",
        "-c",
        "20000",
    ]


def test_ab_command_needs_requests_at_least_concurrency() -> None:
    with pytest.raises(ValueError, match=r"requests >= concurrency.*-n 10 -c 20"):
        ab_argv(requests=10, concurrency=20)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"requests": 30000, "concurrency": 20001}, "at most 20000"),
        ({"concurrency": 0}, "at least 1"),
        ({"requests": 0, "concurrency": 1}, "at least one request"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": math.nan}, "timeout_s"),
    ],
)
def test_ab_command_rejects(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ab_argv(**overrides)


def test_wrk_command() -> None:
    assert wrk_argv() == [
        "wrk",
        "--latency",
        "-t",
        "2",
        "-c",
        "200",
        "-d",
        "10s",
        "--timeout",
        "30s",
        URL,
    ]
    # wrk needs connections >= threads.
    assert wrk_argv(concurrency=1)[2:6] == ["-t", "1", "-c", "1"]
    # wrk is bound by duration: the request count and the -g path change nothing.
    assert wrk_argv(requests=7, per_request_path="/out/x.tsv") == wrk_argv()
    # wrk rejects fractional durations ("0.5s" is a usage error): rounded up.
    assert wrk_argv(duration_s=1.5, timeout_s=0.2)[6:10] == ["-d", "2s", "--timeout", "1s"]
    with pytest.raises(ValueError, match="duration_s"):
        wrk_argv(duration_s=0)
    with pytest.raises(ValueError, match="at least one connection"):
        wrk_argv(concurrency=0)


def test_tools_registry() -> None:
    assert sorted(TOOLS) == ["ab", "wrk", "wrk-t12"]
    assert isinstance(TOOLS["ab"], AbTool) and isinstance(TOOLS["wrk"], WrkTool)
    assert all(tool.name == key for key, tool in TOOLS.items())


def test_wrk_with_more_threads() -> None:
    """The demos' published `wrk -t12`: the only difference is -t, still capped at -c."""
    kwargs = dict(url="http://x:1/", requests=1, timeout_s=30, duration_s=30, per_request_path=None)
    t12 = TOOLS["wrk-t12"]
    assert isinstance(t12, WrkTool)
    argv, default = (
        t12.command(concurrency=400, **kwargs),
        WrkTool().command(concurrency=400, **kwargs),
    )
    assert argv[2:4] == ["-t", "12"] and default[2:4] == ["-t", "2"]
    assert argv[:2] + argv[4:] == default[:2] + default[4:]
    assert t12.command(concurrency=5, **kwargs)[2:4] == ["-t", "5"]
    assert (
        t12.parse(stdout=read("wrk_clean_c10_d2s_200ms.txt"), per_request=None, concurrency=10).tool
        == "wrk-t12"
    )
    with pytest.raises(ValueError, match="at least one thread"):
        WrkTool(threads=0)


def test_load_result_is_frozen() -> None:
    r = parse_wrk("wrk_clean_c10_d2s_200ms.txt")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.complete = 1  # type: ignore[misc]


# ---- wrk: every captured report ------------------------------------------------------------------

# file: (complete, (connect, read, write, timeout), non_2xx, time_taken_s, rps,
#        (p50, p90, p99, max) in ms, mean latency ms)
# fmt: off
WRK_REPORTS = {
    "wrk_clean_c10_d2s_200ms.txt":
        (80, (0, 0, 0, 0), 0, 2.00, 39.92, (243.96, 247.93, 251.90, 251.90), 239.30),
    "wrk_fast_c4_d1s.txt":
        (151407, (0, 0, 0, 0), 0, 1.10, 137619.46, (0.025, 0.034, 1.40, 5.21), 0.06157),
    "wrk_http500_timeout_c8_d3s.txt":
        (33, (0, 0, 0, 1), 8, 3.00, 10.98, (95.86, 99.96, 100.06, 100.06), 85.90),
    "wrk_http500_slow3s_c8_d4s.txt":
        (63, (0, 0, 0, 0), 15, 4.00, 15.73, (96.00, 2480.0, 3050.0, 3050.0), 784.47),
    "wrk_rst_read_errors_c4_d1s.txt":
        (343, (0, 85, 0, 0), 0, 1.01, 341.27, (10.39, 14.31, 19.05, 19.26), 11.39),
}
# fmt: on


@pytest.mark.parametrize("name", sorted(WRK_REPORTS))
def test_wrk_report_figures(name: str) -> None:
    complete, kinds, non_2xx, taken, rps, (p50, p90, p99, top), mean = WRK_REPORTS[name]
    r = parse_wrk(name)
    assert r.tool == "wrk"
    assert r.complete == complete
    assert r.failures == dict(zip(("connect", "read", "write", "timeout"), kinds, strict=True))
    assert r.failed == sum(kinds)
    assert r.non_2xx == non_2xx
    assert r.time_taken_s == pytest.approx(taken)
    assert r.rps == pytest.approx(rps)
    assert r.latency_ms == pytest.approx({"p50": p50, "p90": p90, "p99": p99, "max": top})
    assert r.mean_latency_ms == pytest.approx(mean)
    assert r.connect_max_ms is None
    assert r.steady_rps == r.rps


def test_wrk_with_nothing_completed_has_no_timings() -> None:
    r = parse_wrk("wrk_all_timeout_c2_d2s_3s.txt", concurrency=2)
    assert (r.complete, r.failed, r.non_2xx, r.rps) == (0, 0, 0, 0.0)
    assert r.time_taken_s == pytest.approx(2.07)
    # wrk prints "0.00us" everywhere (and "-nan%"): zeros that measure nothing.
    assert r.latency_ms == {} and r.mean_latency_ms is None


def test_wrk_without_latency_flag_is_an_error() -> None:
    text = read("wrk_clean_c10_d2s_200ms.txt")
    start, end = text.index("  Latency Distribution"), text.index("  80 requests in")
    with pytest.raises(LoadOutputError, match="--latency"):
        WrkTool().parse(stdout=text[:start] + text[end:], per_request=None, concurrency=10)


def test_wrk_counts_with_si_suffix() -> None:
    text = read("wrk_clean_c10_d2s_200ms.txt").replace("  80 requests in", "  1.50k requests in")
    text = text.replace("Transfer/sec", "  Non-2xx or 3xx responses: 2.1M\nTransfer/sec")
    r = WrkTool().parse(stdout=text, per_request=None, concurrency=10)
    assert (r.complete, r.non_2xx) == (1500, 2_100_000)


def test_wrk_latency_in_minutes() -> None:
    text = read("wrk_http500_slow3s_c8_d4s.txt").replace("    3.05s \n", "    1.50m \n")
    r = WrkTool().parse(stdout=text, per_request=None, concurrency=8)
    assert r.latency_ms["p99"] == pytest.approx(90_000.0)


# ---- output that is not a report -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "files", "said"),
    [
        ("ab", ["ab_refused_without_r_n20_c2.txt", "ab_refused_without_r_n20_c2.stderr.txt"],
         "apr_socket_recv: Connection refused (111)"),
        ("ab", ["ab_refused_without_r_combined.txt"], "apr_socket_recv: Connection refused (111)"),
        ("ab", ["ab_refused_without_r_n20_c2.txt"], "(no error line in the output; pass stderr too)"),
        ("ab", ["ab_listen1_threaded_stall_timeout_n40_c20.txt",
                "ab_listen1_threaded_stall_timeout_n40_c20.stderr.txt"],
         "apr_pollset_poll: The timeout specified has expired (70007)"),
        ("ab", ["ab_listen1_threaded_stall_timeout_n40_c20.txt"], "Total of 39 requests completed"),
        ("ab", ["ab_usage_n1_c2_combined.txt"],
         "ab: Cannot use concurrency level greater than total number of requests"),
        ("wrk", ["wrk_refused_c4_d1s.stderr.txt"], "unable to connect to 127.0.0.1:18416 Connection refused"),
        ("wrk", ["wrk_usage_t2_c1_combined.txt"], "number of connections must be >= threads"),
    ],
)  # fmt: skip
def test_unparsable_output_names_the_tools_error(tool: str, files: list[str], said: str) -> None:
    text = "".join(read(f) for f in files)
    with pytest.raises(LoadOutputError) as info:
        TOOLS[tool].parse(stdout=text, per_request=None, concurrency=2)
    message = str(info.value)
    assert message.startswith(f"{tool} printed no report (")
    assert message.endswith(repr(said))
    assert "\n" not in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("tool", ["ab", "wrk"])
def test_empty_output_is_an_error(tool: str) -> None:
    with pytest.raises(LoadOutputError, match="no report"):
        TOOLS[tool].parse(stdout="", per_request=None, concurrency=1)


def test_truncated_ab_report_names_the_missing_line() -> None:
    text = read("ab_clean_n41_c10_200ms.txt")
    with pytest.raises(LoadOutputError, match="'Requests per second' missing"):
        AbTool().parse(
            stdout=text[: text.index("Requests per second")], per_request=None, concurrency=10
        )


# ---- versions ------------------------------------------------------------------------------------


def test_tool_version() -> None:
    assert tool_version(stdout=read("ab_version_V.txt")) == "2.3"
    assert tool_version(stdout=read("ab_clean_n41_c10_200ms.txt")) == "2.3"
    assert tool_version(stdout=read("wrk_version_v.txt")) == "debian/4.1.0-3+b2"
    assert tool_version(stdout=read("wrk_clean_c10_d2s_200ms.txt")) is None
    assert tool_version(stdout="") is None


@pytest.mark.parametrize(
    ("tool", "argv", "captured"),
    [("ab", ["ab", "-V"], "ab_version_V.txt"), ("wrk", ["wrk", "-v"], "wrk_version_v.txt")],
)
def test_each_tool_names_its_version_probe(tool: str, argv: list[str], captured: str) -> None:
    """The probe the run's header reads the version from: the command that printed the
    captured output."""
    assert TOOLS[tool].version_command() == argv
    assert tool_version(stdout=read(captured)) is not None
    assert TOOLS["wrk-t12"].version_command() == ["wrk", "-v"]


# ---- diagnose ------------------------------------------------------------------------------------


def test_diagnose_clean_ab_run_explains_abs_own_ceiling() -> None:
    r = parse_ab("ab_clean_n41_c10_200ms.txt", tsv="ab_clean_n41_c10_200ms.tsv")
    notes = diagnose(result=r, delay=0.2, concurrency=10)
    assert notes == [
        "ab's 40.34 requests/s is at its own ceiling of 40.2/s for n=41, c=10: it sends the first request "
        "alone, so the run lasts at least (n/c + 1) x 0.2 s (ideal 50/s; steady rate 49.5/s)"
    ]


def test_diagnose_ceiling_note_needs_ab_near_its_cap() -> None:
    base = parse_ab("ab_clean_n41_c10_200ms.txt")  # cap for n=41, c=10, 0.2 s: 40.196/s
    near = dataclasses.replace(base, rps=37.0)  # 92% of the cap
    below = dataclasses.replace(base, rps=35.0)  # 87% of the cap
    assert any("ceiling" in n for n in diagnose(result=near, delay=0.2, concurrency=10))
    assert not any("ceiling" in n for n in diagnose(result=below, delay=0.2, concurrency=10))
    # Far below the cap (a stalled run), or not ab: no such note.
    stalled = parse_ab("ab_listen1_threaded_syn_retransmit_n40_c20.txt", concurrency=20)
    assert not any("ceiling" in n for n in diagnose(result=stalled, delay=0.2, concurrency=20))
    wrk = dataclasses.replace(base, tool="wrk")
    assert not any("ceiling" in n for n in diagnose(result=wrk, delay=0.2, concurrency=10))


def test_diagnose_clean_wrk_run_has_nothing_to_say() -> None:
    assert (
        diagnose(result=parse_wrk("wrk_clean_c10_d2s_200ms.txt"), delay=0.2, concurrency=10) == []
    )


def test_diagnose_syn_retransmit() -> None:
    r = parse_ab("ab_listen1_threaded_syn_retransmit_n40_c20.txt", concurrency=20)
    notes = diagnose(result=r, delay=0.2, concurrency=20)
    assert (
        "max connect 1014 ms: at least one SYN was retransmitted "
        "(a listen queue overflowed; the client waited ~1 s)"
    ) in notes
    assert (
        "slowest request 14527 ms against a median of 202 ms: a few requests stalled far longer than the rest"
    ) in notes
    assert not any("median latency" in n for n in notes)  # 202 ms is not twice 0.2 s


def test_diagnose_two_syn_retransmits() -> None:
    r = dataclasses.replace(
        parse_ab("ab_listen1_single_syn_retransmit_n20_c10.txt"), connect_max_ms=3019.0
    )
    notes = diagnose(result=r, delay=0.1, concurrency=10)
    prefix = "max connect 3019 ms: a SYN was retransmitted at least twice (~3 s"
    assert any(n.startswith(prefix) for n in notes)
    assert not any("~1 s" in n for n in notes)


def test_diagnose_queued_requests() -> None:
    r = parse_ab("ab_listen1_single_backoff_n12_c12.txt", concurrency=12)
    notes = diagnose(result=r, delay=1.0, concurrency=12)
    assert (
        "median latency 7.5 s for a 1 s upstream: requests queued (serialised or over capacity)"
        in notes
    )
    assert any(n.startswith("max connect 1018 ms") for n in notes)
    # No upstream delay, no yardstick.
    assert not any("median latency" in n for n in diagnose(result=r, delay=0, concurrency=12))


def test_diagnose_median_threshold_is_twice_the_delay() -> None:
    base = parse_ab("ab_clean_n41_c10_200ms.txt")
    at = dataclasses.replace(base, latency_ms={**base.latency_ms, "p50": 400.0})
    above = dataclasses.replace(base, latency_ms={**base.latency_ms, "p50": 401.0})
    assert not any("median latency" in n for n in diagnose(result=at, delay=0.2, concurrency=10))
    notes = diagnose(result=above, delay=0.2, concurrency=10)
    assert any("median latency 0.401 s for a 0.2 s upstream" in n for n in notes)


def test_diagnose_failures_and_non_2xx() -> None:
    r = parse_ab("ab_http500_every4th_n40_c4.txt", concurrency=4)
    notes = diagnose(result=r, delay=0.05, concurrency=4)
    assert "10 failed requests (connect 0, receive 0, length 10, exceptions 0)" in notes
    assert "10 non-2xx responses out of 40" in notes
    r = parse_wrk("wrk_http500_timeout_c8_d3s.txt", concurrency=8)
    notes = diagnose(result=r, delay=0.05, concurrency=8)
    assert "1 failed requests (connect 0, read 0, write 0, timeout 1)" in notes
    assert "8 non-2xx/3xx responses out of 33" in notes


def test_diagnose_ab_refused_with_r() -> None:
    notes = diagnose(
        result=parse_ab("ab_refused_with_r_n20_c2.txt", concurrency=2), delay=0.2, concurrency=2
    )
    assert notes[0] == (
        "30 failure events for 20 'complete' requests: with -r, ab counts requests that got no answer "
        "as complete, so its 93896.71 requests/s is meaningless"
    )
    assert "30 failed requests (connect 0, receive 20, length 0, exceptions 10)" in notes


def test_diagnose_nothing_completed() -> None:
    notes = diagnose(
        result=parse_wrk("wrk_all_timeout_c2_d2s_3s.txt", concurrency=2), delay=3, concurrency=2
    )
    assert notes == ["no request completed in 2.07 s: the figures below describe nothing"]


# ---- housekeeping --------------------------------------------------------------------------------


def test_every_capture_is_used() -> None:
    """Each captured file is named somewhere in this module, so none sits there untested."""
    captured = sorted(p.name for p in DATA.iterdir() if p.name.startswith(("ab_", "wrk_")))
    assert len(captured) >= 30
    source = Path(__file__).read_text(encoding="utf-8")
    assert [name for name in captured if f'"{name}"' not in source] == []


# ---- the per-request timeline: honest throughput (playground.bench.steady) ------------------------------


def test_serial_dev_server_capture_gives_the_rate_it_served_not_c_over_mean() -> None:
    """The serial dev server at n=10 c=5 served 0.98 requests/s; c / mean response
    time read 1.4 because the run never got past its start-up. Recorded with the runner
    (tests/data/record-fixtures.sh)."""
    from playground.bench.entry import Measured
    from playground.bench.steady import parse_timeline, waves
    from playground.core.verdicts import MIN_STEADY_WAVES

    r = parse_ab(
        "ab_devserver_serial_n10_c5_1s.txt", concurrency=5, tsv="ab_devserver_serial_n10_c5_1s.tsv"
    )
    timeline = parse_timeline(read("ab_devserver_serial_n10_c5_1s.tsv"))
    assert r.rps == pytest.approx(1.0, abs=0.05)
    assert r.steady_rps == pytest.approx(1.37, abs=0.05)  # c / mean: the old "steady 1.4"
    assert waves(time_taken_s=r.time_taken_s, mean_ms=r.mean_latency_ms) < MIN_STEADY_WAVES
    measured = Measured(result=r, timeline=timeline, series={}, before={}, loadgen_cpu=None)
    assert measured.steady is None
    assert measured.headline == pytest.approx(1.0, abs=0.05)


def test_waves_is_the_run_time_over_the_mean_response_time() -> None:
    from playground.bench.steady import waves

    assert waves(time_taken_s=10.0, mean_ms=2500.0) == 4.0
    assert waves(time_taken_s=10.0, mean_ms=0.0) is None
    assert waves(time_taken_s=None, mean_ms=100.0) is None


def test_a_run_of_enough_rounds_keeps_its_steady_figure() -> None:
    from playground.bench.entry import Measured
    from playground.bench.steady import parse_timeline
    from playground.core.verdicts import MIN_STEADY_WAVES

    r = parse_ab("ab_ramp_first_slowest_n41_c10.txt", tsv="ab_ramp_first_slowest_n41_c10.tsv")
    timeline = parse_timeline(read("ab_ramp_first_slowest_n41_c10.tsv"))
    measured = Measured(result=r, timeline=timeline, series={}, before={}, loadgen_cpu=None)
    assert measured.waves >= MIN_STEADY_WAVES
    assert measured.steady == r.steady_rps
    # The same run with most answers errors: c / mean would count them as served.
    swamped = Measured(
        result=dataclasses.replace(r, non_2xx=r.complete // 2),
        timeline=timeline,
        series={},
        before={},
        loadgen_cpu=None,
    )
    assert swamped.steady is None and swamped.headline == r.rps


def test_latency_distribution_is_every_request_by_nearest_rank() -> None:
    from playground.bench.steady import parse_timeline

    timeline = parse_timeline(read("ab_devserver_serial_n10_c5_1s.tsv"))
    points = dict((p, ms) for p, ms in timeline.distribution())
    assert points[0] == min(timeline.ttimes_ms) and points[100] == max(timeline.ttimes_ms)
    assert points[50] == sorted(timeline.ttimes_ms)[4]  # 5th of 10
    assert list(points.values()) == sorted(points.values())


def test_a_timeline_without_rows_or_columns() -> None:
    from playground.bench.steady import parse_timeline

    assert parse_timeline(TSV_HEADER + "\n") is None
    with pytest.raises(LoadOutputError, match="no 'seconds', 'ttime' and 'wait' columns"):
        parse_timeline("a\tb\n1\t2\n")
    with pytest.raises(LoadOutputError, match="line 2 is not a request"):
        parse_timeline(TSV_HEADER + "\nMon\tx\t0\t1\t1\t1\n")


def test_ab_g_rows_of_a_run_through_an_incident() -> None:
    """ab -c 6 -t 30 through the story's incident (the third party 0.2 s, then 2 s for 15 s):
    every finished request is a row, each with its start second and total time; the rows are
    sorted by total time, not by start."""
    from playground.core.tools.abrequests import ab_rows

    rows = ab_rows((DATA / "ab_story_incident_c6.tsv").read_text())
    result = AbTool().parse(
        stdout=(DATA / "ab_story_incident_c6.txt").read_text(), per_request=None, concurrency=6
    )
    assert len(rows) == result.complete == 425 and result.failed == 0
    assert [r.total_ms for r in rows] == sorted(r.total_ms for r in rows)
    assert max(r.total_ms for r in rows) == result.latency_ms["max"] == 2028
    starts = [r.start_s for r in rows]
    assert max(starts) - min(starts) in (29, 30)  # -t 30, one-second resolution
    with pytest.raises(LoadOutputError, match="'seconds', 'ttime' and 'wait'"):
        ab_rows("a\tb\n1\t2\n")


def test_a_syn_retransmit_stands_a_second_apart_from_the_other_connects() -> None:
    """listen(1): the retransmitted connects took ~1 s, the rest a few ms."""
    from playground.core.verdicts import SYN_GAP_MS

    r = parse_ab(
        "ab_listen1_threaded_syn_retransmit_n40_c20.txt",
        concurrency=20,
        tsv="ab_listen1_threaded_syn_retransmit_n40_c20.tsv",
    )
    assert r.connect_max_ms >= 1000 and r.connect_gap_ms >= SYN_GAP_MS


def test_ten_thousand_connects_spread_evenly_have_no_such_gap() -> None:
    """uWSGI gevent at c=10,000: thousands of connects between 0.9 and 2.9 s, in steps of at
    most ~560 ms, against the whole second a retransmit leaves."""
    from playground.core.verdicts import SYN_GAP_MS

    r = parse_ab(
        "ab_c10000_uwsgi_gevent_every40th.txt",
        concurrency=10000,
        tsv="ab_c10000_uwsgi_gevent_every40th.tsv",
    )
    assert r.connect_max_ms == 2874.0
    slow = [
        row.connect_ms
        for row in ab_rows(read("ab_c10000_uwsgi_gevent_every40th.tsv"))
        if row.connect_ms >= 900
    ]
    assert len(slow) > 100
    assert r.connect_gap_ms <= 600 < SYN_GAP_MS


def test_connect_gap_needs_rows() -> None:
    from playground.core.tools.abrequests import AbRequest, connect_gap_ms

    assert connect_gap_ms([]) is None
    rows = [AbRequest(start_s=0, total_ms=1.0, wait_ms=1.0, connect_ms=c) for c in (0, 3, 1004)]
    assert connect_gap_ms(rows) == 1001

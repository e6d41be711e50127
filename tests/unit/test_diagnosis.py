"""The diagnosis rules and their thresholds (playground.bench.diagnosis, playground.core.verdicts),
one test per edge."""

from __future__ import annotations

from pathlib import Path

import pytest

from playground.bench import diagnosis
from playground.bench.diagnosis import (
    Evidence,
    cpu_bound,
    diagnose,
    noisy,
    relative_spread,
    saturated_load_generator,
    steady_state,
)
from playground.core import verdicts
from playground.core.results import Sample
from playground.core.tools.output import LoadResult
from playground.core.verdicts import NOISY_SPREAD, SYN_RETRANSMIT_MS

SRC = Path(__file__).resolve().parents[2] / "src" / "playground"


def result(**changes) -> LoadResult:
    base = dict(
        tool="ab",
        complete=2000,
        failed=0,
        failures={},
        non_2xx=0,
        time_taken_s=11.0,
        rps=181.0,
        latency_ms={"p50": 1005.0, "p90": 1010.0, "p99": 1020.0, "max": 1030.0},
        connect_max_ms=3.0,
        steady_rps=198.0,
        mean_latency_ms=1006.0,
    )
    return LoadResult(**{**base, **changes})


def codes(findings) -> list[str]:
    return [f.code for f in findings]


# ---- noisy repeats (a spread over --repeat runs above 5% is flagged) -----------------------------
def test_spread_is_max_minus_min_over_the_median():
    assert relative_spread([100.0, 104.0, 102.0]) == pytest.approx(4 / 102)
    assert relative_spread([100.0]) is None
    assert relative_spread([]) is None


def test_a_spread_above_five_percent_is_noisy_and_at_or_below_is_not():
    assert NOISY_SPREAD == 0.05
    assert noisy([100.0, 105.0]) == []  # exactly 5% of the median 102.5 is less: 4.9%
    assert noisy([100.0, 104.9]) == []
    flagged = noisy([100.0, 106.0])  # 5.8%
    assert codes(flagged) == ["noisy"] and flagged[0].severity == "warning"
    assert flagged[0].figures["spread"] == pytest.approx(6 / 103)
    assert "2 repeats lie 5.8% apart" in flagged[0].message


def test_one_repeat_is_never_noisy():
    assert noisy([100.0]) == []


def test_the_runner_flags_noisy_repeats_through_diagnose():
    quiet = diagnose(
        Evidence(
            result=result(),
            delay=1.0,
            concurrency=200,
            requests=2000,
            repeat_figures=[198.0, 199.0],
            waves=10.0,
            steady_estimate=198.0,
        )
    )
    loud = diagnose(
        Evidence(
            result=result(),
            delay=1.0,
            concurrency=200,
            requests=2000,
            repeat_figures=[180.0, 199.0],
            waves=10.0,
            steady_estimate=198.0,
        )
    )
    assert "noisy" not in codes(quiet) and "noisy" in codes(loud)


# ---- SYN retransmit: one threshold, used by every module ----------------------------------------
def test_syn_retransmit_threshold_edges():
    assert SYN_RETRANSMIT_MS == 900.0
    below = diagnosis.load_findings(result=result(connect_max_ms=899.0), delay=1.0, concurrency=200)
    at = diagnosis.load_findings(result=result(connect_max_ms=900.0), delay=1.0, concurrency=200)
    assert "syn-retransmit" not in codes(below)
    assert "syn-retransmit" in codes(at)
    twice = diagnosis.load_findings(
        result=result(connect_max_ms=3019.0), delay=1.0, concurrency=200
    )
    assert [f.figures["retransmits"] for f in twice if f.code == "syn-retransmit"] == [2]


def test_slow_connects_without_a_retransmits_gap_are_not_called_a_retransmit():
    """uWSGI gevent at c=10,000: max connect 2874 ms, the connects climbing to it in steps of
    at most 564 ms."""
    spread = result(connect_max_ms=2874.0, connect_gap_ms=564.0)
    found = diagnosis.load_findings(result=spread, delay=84.5, concurrency=10000)
    assert "syn-retransmit" not in codes(found)
    (slow,) = [f for f in found if f.code == "slow-connects"]
    assert slow.severity == "warning" and slow.figures["connect_gap_ms"] == 564.0
    assert "10000 connections were being set up at once" in slow.message
    assert "cannot tell" in slow.message
    # The same maximum with a second's gap below it is a retransmit, as is one with no
    # per-request file to tell (wrk's, or ab run without -g).
    for gap in (SYN_RETRANSMIT_MS, None):
        again = diagnosis.load_findings(
            result=result(connect_max_ms=2874.0, connect_gap_ms=gap), delay=84.5, concurrency=10000
        )
        assert "syn-retransmit" in codes(again) and "slow-connects" not in codes(again)
    edge = result(connect_max_ms=1014.0, connect_gap_ms=verdicts.SYN_GAP_MS)
    assert "syn-retransmit" in codes(
        diagnosis.load_findings(result=edge, delay=1.0, concurrency=20)
    )


def test_the_diagnosis_draws_the_syn_line_where_the_verdicts_do():
    """The report once said 1000 ms where load.py said 900: on either side of the one
    threshold (`verdicts.SYN_RETRANSMIT_MS`) the diagnosis agrees with the verdict."""
    line = verdicts.SYN_RETRANSMIT_MS
    for ms in (line - 1.0, line, line + 99.0):
        found = diagnosis.load_findings(
            result=result(connect_max_ms=ms, connect_gap_ms=None), delay=1.0, concurrency=20
        )
        assert ("syn-retransmit" in codes(found)) is verdicts.syn_retransmitted(ms), ms
    assert not verdicts.syn_retransmitted(line - 1.0) and verdicts.syn_retransmitted(line)


# ---- steady state ---------------------------------------------------------------------------------
def test_no_steady_figure_before_enough_response_times():
    short = steady_state(waves=2.75, estimate=1.37, measured=0.98)
    assert codes(short) == ["no-steady-state"]
    assert short[0].figures == {
        "waves": 2.75,
        "c_over_mean_rps": 1.37,
        "rps": 0.98,
        "min_waves": verdicts.MIN_STEADY_WAVES,
    }
    assert "read 0.98 requests/s measured" in short[0].message
    assert steady_state(waves=10.5, estimate=198.0, measured=181.0) == []


def test_ab_at_its_cap_quotes_no_steady_rate_when_there_is_none():
    r = result(
        complete=10,
        rps=3.2,
        steady_rps=5.0,
        time_taken_s=3.1,
        latency_ms={"p50": 1005.0, "p90": 1010.0, "p99": 1020.0, "max": 1030.0},
    )
    found = diagnose(
        Evidence(result=r, delay=1.0, concurrency=5, requests=10, waves=3.0, steady_estimate=5.0)
    )
    cap = [f for f in found if f.code == "ab-at-its-cap"]
    assert cap and "steady rate" not in cap[0].message
    assert "no-steady-state" in codes(found)


# ---- error answers: c / mean counts them as served ---------------------------------------------
def test_error_answers_above_one_percent_withhold_the_steady_figure():
    """Quart at c=10,000: most answers were quick 503s and c / mean read 1.3 times the ideal."""
    assert diagnosis.MAX_ERROR_SHARE == 0.01
    swamped = result(complete=40001, non_2xx=39040, failed=39040, rps=140.0, steady_rps=15600.0)
    assert not diagnosis.steady_holds(result=swamped, waves=10.0)
    found = diagnose(
        Evidence(
            result=swamped,
            delay=84.5,
            concurrency=10000,
            requests=40001,
            waves=10.0,
            steady_estimate=15600.0,
        )
    )
    said = [f for f in found if f.code == "errors-in-steady"]
    assert said and said[0].figures["errors"] == 39040
    assert "39040 of 40001" in said[0].message and "140 requests/s measured" in said[0].message


def test_a_few_errors_keep_the_steady_figure():
    one = result(complete=40001, failed=1, failures={"length": 1})
    assert diagnosis.steady_holds(result=one, waves=10.0)
    assert diagnosis.errors_in_steady(one, estimate=198.0) == []
    edge = result(complete=1000, non_2xx=10)  # exactly 1%
    assert diagnosis.steady_holds(result=edge, waves=10.0)
    assert not diagnosis.steady_holds(result=result(complete=1000, non_2xx=11), waves=10.0)


def test_the_error_rule_covers_wrk_too():
    """wrk's Requests/sec counts non-2xx answers as well; it needs no waves."""
    wrk = result(tool="wrk", complete=1000, non_2xx=500, steady_rps=900.0)
    assert not diagnosis.steady_holds(result=wrk, waves=None)
    assert diagnosis.steady_holds(result=result(tool="wrk"), waves=None)


def test_a_run_with_nothing_complete_has_no_steady_figure():
    assert not diagnosis.steady_holds(result=result(complete=0), waves=10.0)


# ---- the machine ----------------------------------------------------------------------------------
def rows(cpu: float, processes: int = 1) -> list[Sample]:
    return [Sample(t=0.0, threads=1, processes=processes, rss_mb=1.0, cpu_pct=cpu)]


def test_cpu_bound_rules():
    assert cpu_bound(samples=rows(89.0), cores=2) == []
    assert codes(cpu_bound(samples=rows(90.0), cores=2)) == ["cpu-bound"]  # one process
    assert codes(cpu_bound(samples=rows(120.0, processes=5), cores=2)) == ["cpu-busy"]
    assert codes(cpu_bound(samples=rows(180.0, processes=5), cores=2)) == ["cpu-bound"]
    assert cpu_bound(samples=[], cores=2) == []


def test_saturated_load_generator():
    assert saturated_load_generator(94.9) == []
    assert saturated_load_generator(None) == []
    found = saturated_load_generator(95.0)
    assert codes(found) == ["loadgen-saturated"] and found[0].severity == "error"


def test_open_files_only_with_failures_near_the_limit():
    ev = dict(
        delay=1.0,
        concurrency=10000,
        requests=20000,
        open_file_limits={"flask_app": 20000},
        processes_by_service={"flask_app": 1},
    )
    assert codes(diagnosis.open_files(Evidence(result=result(failed=3), **ev))) == ["open-files"]
    assert diagnosis.open_files(Evidence(result=result(failed=0), **ev)) == []
    far = {**ev, "open_file_limits": {"flask_app": 1048576}}
    assert diagnosis.open_files(Evidence(result=result(failed=3), **far)) == []


# ---- ab's surplus connection (scale/README.md: the one Length failure at c=10,000) --------------
DATA = SRC.parents[1] / "tests" / "data"


def captured(stem: str) -> LoadResult:
    from playground.core.tools.abreport import AbTool

    return AbTool().parse(
        stdout=(DATA / f"{stem}.txt").read_text(),
        per_request=(DATA / f"{stem}.tsv").read_text(),
        concurrency=20,
    )


def test_a_connection_ab_never_wrote_on_is_named_not_left_a_bare_failure():
    """Real capture: -n 20 -c 20 against a server that closes an idle connection after 1 s."""
    r = captured("ab_idle_close_n20_c20_3s")
    findings = diagnose(Evidence(result=r, delay=3.0, concurrency=20, requests=20))
    assert "ab-unwritten-connection" in codes(findings)
    finding = next(f for f in findings if f.code == "ab-unwritten-connection")
    assert finding.severity == "warning"
    assert finding.figures == {"unwritten": 1, "length": 1, "failed": 1}
    assert (
        "1 of the 1 Length failures is a connection ab opened but never sent a request on"
        in finding.message
    )
    assert "none is the server's" in finding.message
    # ab's own count stays visible next to it.
    assert "failed-requests" in codes(findings)


def test_no_surplus_connection_with_one_request_more():
    r = captured("ab_idle_close_n21_c20_3s")
    assert "ab-unwritten-connection" not in codes(
        diagnose(Evidence(result=r, delay=3.0, concurrency=20, requests=21))
    )


def test_unwritten_records_without_length_failures_or_beside_others():
    # A record without a Length failure to explain says nothing (only -g data, no failure).
    assert diagnosis.ab_unwritten_connections(result(unwritten=1)) == []
    # Other failures too: the finding names only its share and does not clear the rest.
    mixed = diagnosis.ab_unwritten_connections(
        result(
            failed=5,
            failures={"connect": 0, "receive": 2, "length": 3, "exceptions": 0},
            unwritten=1,
        )
    )
    assert codes(mixed) == ["ab-unwritten-connection"]
    assert "1 of the 3 Length failures" in mixed[0].message
    assert "none is the server's" not in mixed[0].message
    # wrk has no such records.
    assert (
        diagnosis.ab_unwritten_connections(
            result(tool="wrk", failed=1, unwritten=1, failures={"length": 1})
        )
        == []
    )


# ---- overlap: serialised, capped or concurrent (the demos' shape, the contenders' verdict) ----
@pytest.mark.parametrize(
    ("figures", "verdict"),
    [
        # WsgiToAsgi at n=10 c=5, delay 1 s: 0.98 requests/s, one at a time.
        (dict(rps=0.98, delay=1.0, concurrency=5), "serialised"),
        (dict(rps=1.5, delay=1.0, concurrency=200), "serialised"),
        (dict(rps=1.6, delay=1.0, concurrency=200, efficiency=0.9), "concurrent"),
        # aiohttp's cap of 100 connections at c=200: half of c in flight, whatever ab's rate.
        (dict(rps=93.6, delay=1.0, concurrency=200, efficiency=0.51), "capped"),
        # Gunicorn gthread 4 x 50 at c=200 on a busy machine: slowed, not capped.
        (dict(rps=139.1, delay=1.0, concurrency=200, efficiency=0.82), "concurrent"),
        # 200 threads at c=1000 (a scale run's delay): a fifth of c.
        (dict(rps=180.0, delay=5.0, concurrency=1000, efficiency=0.18), "capped"),
        # ab -n 10 -c 5 against a concurrent server never settles: its 3.33/s is ab's own ceiling.
        (dict(rps=3.33, delay=1.0, concurrency=5, ab_cap_rps=10 / 3), "concurrent"),
        (dict(rps=2.0, delay=1.0, concurrency=5, ab_cap_rps=10 / 3), "capped"),
        (dict(rps=3000.0, delay=0.0, concurrency=400), None),  # no sleep: CPU, not waiting
        (dict(rps=None, delay=1.0, concurrency=5), None),
    ],
)
def test_overlap(figures, verdict):
    assert verdicts.overlap(**figures) == verdict


def test_overlap_edges_are_the_thresholds():
    at = verdicts.SERIALISED_AT_ONCE
    assert verdicts.overlap(rps=at, delay=1.0, concurrency=200, efficiency=0.9) == "serialised"
    share = verdicts.CONCURRENT_SHARE
    assert verdicts.overlap(rps=100.0, delay=1.0, concurrency=200, efficiency=share) == "concurrent"
    assert (
        verdicts.overlap(rps=100.0, delay=1.0, concurrency=200, efficiency=share - 0.01) == "capped"
    )

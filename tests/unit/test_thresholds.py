"""Every rule with a threshold, tested exactly at it and just past it: a rule written `>`
where it means `>=` (or the other way) fails here."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from playground.bench import diagnosis, hostpath
from playground.bench.hostpath import HostPath, Proxy
from playground.core import verdicts
from playground.core.results import Entry, Finding, Sample
from playground.core.tools.ab import ab_cap_rps
from playground.core.tools.output import LoadResult
from playground.faults.overload import shed_summary
from playground.faults.results import PhaseStats
from playground.incident import analysis, capacity, held
from playground.incident.storyresults import StoryTarget, SweepStep
from playground.incident.targetresults import StorySummary

BELOW = math.nextafter(held.HELD_SHARE, 0)


def said(served: float) -> set[str]:
    """The codes incident() finds for a target that served this share during the incident."""
    target = StoryTarget(summary=StorySummary(visits_served_during=served, recovery_s=1.0))
    return {f.code for f in held.incident(target)} & {"held", "collapsed"}


def test_the_incident_is_held_exactly_at_the_held_share_and_collapsed_just_below():
    assert held.HELD_SHARE == 0.95
    assert said(0.95) == {"held"} and said(BELOW) == {"collapsed"}
    assert held.outcome(0.95, None) == held.HELD
    assert held.outcome(BELOW, None) == held.NOT_RECOVERED
    assert held.outcome(BELOW, 4.0) == held.COLLAPSED


def test_a_sweep_step_holds_at_exactly_the_held_share_of_the_offered_rate():
    assert held.step_outcome(SweepStep(offered_per_s=100.0, goodput_per_s=95.0)) == "held"
    below = SweepStep(offered_per_s=100.0, goodput_per_s=math.nextafter(95.0, 0))
    assert held.step_outcome(below) == held.FELL


def test_a_pool_is_over_its_capacity_only_past_it():
    """2 x 64 threads at 2 s answer 64 visits/s: offered 64 is within, a whisker more is over."""
    at = capacity.predict(workers=2, threads=64, upstream_s=2.0, rate=64.0, timeout_s=4.0)
    assert at.capacity_per_s == 64.0 and not at.over and at.lasts_s is None
    past = capacity.predict(
        workers=2, threads=64, upstream_s=2.0, rate=math.nextafter(64.0, 100), timeout_s=4.0
    )
    assert past.over and past.lasts_s is not None


@pytest.mark.parametrize(
    ("rps", "efficiency", "shape"),
    [
        (verdicts.SERIALISED_AT_ONCE, None, "serialised"),
        (math.nextafter(verdicts.SERIALISED_AT_ONCE, 2), 0.1, "capped"),
        (100.0, verdicts.CONCURRENT_SHARE, "concurrent"),
        (100.0, math.nextafter(verdicts.CONCURRENT_SHARE, 0), "capped"),
    ],
)
def test_serialised_and_concurrent_at_their_thresholds(rps, efficiency, shape):
    assert verdicts.overlap(rps=rps, delay=1.0, concurrency=200, efficiency=efficiency) == shape


def test_steady_is_reached_at_exactly_the_minimum_waves():
    assert diagnosis.steady_reached(verdicts.MIN_STEADY_WAVES)
    assert not diagnosis.steady_reached(math.nextafter(verdicts.MIN_STEADY_WAVES, 0))


def test_repeats_are_noisy_only_past_the_noisy_spread():
    # (105 - 100) / 100 is 0.05 on the dot in floats; 105.001 is past it.
    assert (105.0 - 100.0) / 100.0 == verdicts.NOISY_SPREAD
    assert diagnosis.noisy([100.0, 100.0, 105.0]) == []
    assert [f.code for f in diagnosis.noisy([100.0, 100.0, 105.001])] == ["noisy"]


def test_the_load_generator_is_saturated_from_its_threshold_on():
    assert diagnosis.saturated(diagnosis.SATURATED_CPU_PCT)
    assert not diagnosis.saturated(math.nextafter(diagnosis.SATURATED_CPU_PCT, 0))


# --- the bench's diagnoses: each at its own value (written out, so that moving the constant
# fails as surely as turning >= into >) and one step past it --------------------------------
def load(**changes: object) -> LoadResult:
    """ab's report of a clean run of 2000 requests at c=200 against a 1 s upstream."""
    base: dict[str, object] = dict(
        tool="ab",
        complete=2000,
        failed=0,
        failures={},
        non_2xx=0,
        time_taken_s=11.0,
        rps=181.0,
        latency_ms={"p50": 1005.0, "max": 1030.0},
        connect_max_ms=3.0,
        steady_rps=198.0,
        mean_latency_ms=1006.0,
    )
    return LoadResult(**{**base, **changes})  # type: ignore[arg-type]


def found(result: LoadResult, *, delay: float = 1.0, concurrency: int = 200) -> dict[str, Finding]:
    findings = diagnosis.load_findings(result=result, delay=delay, concurrency=concurrency)
    return {f.code: f for f in findings}


def under(value: float) -> float:
    return math.nextafter(value, -math.inf)


def over(value: float) -> float:
    return math.nextafter(value, math.inf)


def test_a_connect_of_900_ms_is_a_retransmitted_syn_and_one_a_whisker_faster_is_not():
    assert verdicts.syn_retransmitted(900.0) and not verdicts.syn_retransmitted(under(900.0))
    assert "syn-retransmit" in found(load(connect_max_ms=900.0))
    assert not {"syn-retransmit", "slow-connects"} & set(found(load(connect_max_ms=under(900.0))))


def test_a_connect_of_2900_ms_is_two_retransmits_and_one_a_whisker_faster_is_one():
    def retransmits(connect_ms: float) -> object:
        return found(load(connect_max_ms=connect_ms))["syn-retransmit"].figures["retransmits"]

    assert retransmits(2900.0) == 2 and retransmits(under(2900.0)) == 1


def test_a_900_ms_gap_between_connects_is_a_retransmit_and_a_shorter_one_is_not():
    def codes(gap_ms: float) -> set[str]:
        return set(found(load(connect_max_ms=2874.0, connect_gap_ms=gap_ms))) & {
            "syn-retransmit",
            "slow-connects",
        }

    assert codes(900.0) == {"syn-retransmit"} and codes(under(900.0)) == {"slow-connects"}


def test_a_median_of_twice_the_delay_has_not_queued_and_one_past_it_has():
    assert verdicts.queued(p50_ms=over(2000.0), delay=1.0)
    assert not verdicts.queued(p50_ms=2000.0, delay=1.0)
    assert "queued" not in found(load(latency_ms={"p50": 2000.0, "max": 2000.0}))
    assert "queued" in found(load(latency_ms={"p50": over(2000.0), "max": 2001.0}))


@pytest.mark.parametrize(
    ("p50_ms", "max_ms", "stalled"),
    [
        (100.0, 1000.0, True),  # a second, ten medians: stalled
        (100.0, under(1000.0), False),  # a whisker under a second: not
        (200.0, 1000.0, True),  # exactly five medians: stalled
        (over(200.0), 1000.0, False),  # a whisker under five medians: not
    ],
)
def test_the_slowest_request_stalls_at_a_second_and_five_medians(p50_ms, max_ms, stalled):
    result = load(latency_ms={"p50": p50_ms, "max": max_ms})
    assert ("stalled-requests" in found(result, delay=0.05)) is stalled


def waves(*, steady: float, p50_ms: float, cpu_ms: float = 1.0) -> list[str]:
    """lockstep_waves at c=100 against a 1 s upstream (ideal 100/s): a wave costs
    100 x cpu_ms of CPU."""
    found = diagnosis.lockstep_waves(
        result=load(latency_ms={"p50": p50_ms, "max": p50_ms}),
        delay=1.0,
        concurrency=100,
        cpu_ms=cpu_ms,
        samples=[Sample(processes=1, cpu_pct=50.0)],
        steady=steady,
        ideal=100.0,
    )
    return [f.code for f in found]


def test_lockstep_waves_need_a_shortfall_of_five_percent():
    assert waves(steady=under(95.0), p50_ms=1100.0) == ["lockstep-waves"]
    assert waves(steady=95.0, p50_ms=1100.0) == []


def test_lockstep_waves_need_a_wait_past_two_percent_of_the_delay():
    assert waves(steady=90.0, p50_ms=over(1020.0)) == ["lockstep-waves"]
    assert waves(steady=90.0, p50_ms=1020.0) == []


def test_lockstep_waves_explain_a_wait_of_at_most_one_and_a_half_waves():
    """A wave of 100 x 1 ms is 100 ms of CPU: a 150 ms wait is the wave's, more is not."""
    assert waves(steady=90.0, p50_ms=1150.0) == ["lockstep-waves"]
    assert waves(steady=90.0, p50_ms=over(1150.0)) == []


def test_ab_is_at_its_cap_from_nine_tenths_of_it_while_the_cap_is_below_95_percent_of_ideal():
    def at_cap(*, n: int, rps_share: float) -> bool:
        cap = ab_cap_rps(requests=n, concurrency=10, delay=1.0)
        assert cap is not None
        result = load(complete=n, rps=rps_share * cap)
        return "ab-at-its-cap" in found(result, concurrency=10)

    # n=189, c=10, 1 s: the cap is 9.497/s, under 0.95 x the ideal 10/s.
    assert at_cap(n=189, rps_share=0.9) and not at_cap(n=189, rps_share=under(0.9))
    # n=190: the cap is 9.5/s, exactly 0.95 x the ideal: ab is not held under the server's ideal.
    assert not at_cap(n=190, rps_share=1.0)


@pytest.mark.parametrize(
    ("peak", "processes", "code"),
    [
        (180.0, 4, "cpu-bound"),  # 90% of both cores
        (under(180.0), 4, "cpu-busy"),
        (90.0, 1, "cpu-bound"),  # 90% of one core, in one process
        (90.0, 4, "cpu-busy"),
        (under(90.0), 4, None),
    ],
)
def test_cpu_bound_from_90_percent_of_every_core_or_of_one_in_one_process(peak, processes, code):
    findings = diagnosis.cpu_bound(samples=[Sample(processes=processes, cpu_pct=peak)], cores=2)
    assert [f.code for f in findings] == ([code] if code else [])


def test_the_load_generator_is_saturated_at_95_percent_of_its_core():
    assert diagnosis.saturated(95.0) and not diagnosis.saturated(under(95.0))


def test_a_steady_figure_survives_one_percent_of_error_answers_and_no_more():
    one_percent = load(complete=1000, failed=10, failures={"receive": 10})
    past = load(complete=1000, failed=11, failures={"receive": 11})
    assert diagnosis.steady_holds(result=one_percent, waves=10.0)
    assert not diagnosis.steady_holds(result=past, waves=10.0)
    assert diagnosis.errors_in_steady(one_percent, estimate=100.0) == []
    assert [f.code for f in diagnosis.errors_in_steady(past, estimate=100.0)] == [
        "errors-in-steady"
    ]


def test_steady_at_four_response_times_written_out():
    assert diagnosis.steady_reached(4.0) and not diagnosis.steady_reached(under(4.0))


def test_descriptors_run_out_from_90_percent_of_the_open_file_limit():
    """Three processes (a master and two workers): c requests in flight need c descriptors
    each (two sockets per request, over two workers)."""

    def open_files(concurrency: int) -> list[str]:
        evidence = diagnosis.Evidence(
            result=load(failed=5, failures={"receive": 5}),
            delay=1.0,
            concurrency=concurrency,
            requests=2000,
            open_file_limits={"app": 1000},
            processes_by_service={"app": 3},
        )
        return [f.code for f in diagnosis.open_files(evidence)]

    assert open_files(900) == ["open-files"] and open_files(899) == []


def test_a_mode_keeps_scaling_at_nine_tenths_of_its_ideal():
    def keeps(efficiency: float) -> bool | None:
        entry = Entry(
            name="x", concurrency=10, delay=1.0, rps=9.0, efficiency=efficiency, valid=True
        )
        return verdicts.verdicts(entry).keeps_scaling

    assert keeps(0.9) is True and keeps(under(0.9)) is False


def test_the_incident_held_share_written_out():
    assert held.served_enough(0.95) and not held.served_enough(under(0.95))


def host_notes(*, concurrency: int = 1, open_files: int = 7, conntrack: int = 100) -> list[str]:
    """What the host path blames for a load through one docker-proxy with 1000 descriptors
    allowed, on a host tracking `conntrack` of 1000 connections."""
    proxy = Proxy(pid=42, state="S", open_files=7, limit=1000)
    after = replace(proxy, open_files=open_files)

    def host(*proxies: Proxy, tracked: int) -> HostPath:
        return HostPath(
            3000, proxies, listen_overflows=0, somaxconn=4096, conntrack=(tracked, 1000)
        )

    return hostpath.causes(
        before=host(proxy, tracked=100),
        after=host(after, tracked=conntrack),
        concurrency=concurrency,
        output="",
    )


def test_the_host_paths_proxy_is_near_its_open_files_from_90_percent_of_them():
    assert host_notes(concurrency=450) and not host_notes(concurrency=449)  # 2 per connection
    assert host_notes(open_files=900) and not host_notes(open_files=899)


def test_the_hosts_connection_tracking_is_nearly_full_from_90_percent_of_it():
    assert host_notes(conntrack=900) and not host_notes(conntrack=899)


def shed(*, p50_ms: float = 1050.0, p99_ms: float = 1200.0, connect_ms: float = 5.0) -> str:
    """What the overload fault says of ab's load at c=2000 against a 1 s upstream."""
    probe = PhaseStats(from_s=0.0, to_s=20.0, requests=10, kinds={"200": 10}, p50_s=1.0)
    ab = load(latency_ms={"p50": p50_ms, "p99": p99_ms, "max": p99_ms}, connect_max_ms=connect_ms)
    return " | ".join(shed_summary(ab=ab, ab_error=None, probe=probe, delay=1, concurrency=2000))


def test_the_overload_fault_reads_a_retransmit_and_queueing_by_the_benchs_rules():
    assert "listen queue overflowed" in shed(connect_ms=900.0)
    assert "listen queue overflowed" not in shed(connect_ms=under(900.0))
    assert "queueing: median" in shed(p50_ms=over(2000.0), p99_ms=2500.0)
    assert "queueing: median" not in shed(p50_ms=2000.0, p99_ms=2500.0)


def test_the_overload_fault_calls_a_p99_past_three_delays_some_queueing():
    assert "some requests queued" in shed(p99_ms=over(3000.0))
    assert "some requests queued" not in shed(p99_ms=3000.0)


def recovered_after(*, short_at: int | None = None, failed_at: int | None = None) -> float | None:
    """100 visits due each second and 95 served (5 failed) after an incident ending at 5 s;
    one second one visit short, or one more failed."""
    goodput = [95 if s != short_at else 94 for s in range(20)]
    failed = [5 if s != failed_at else 6 for s in range(20)]
    return analysis.recovery_time(goodput, [100] * 20, incident_end=5.0, until=20.0, failed=failed)


def test_recovered_at_95_percent_served_and_5_percent_failed_and_not_one_visit_past_either():
    assert recovered_after() == 0.0
    assert recovered_after(short_at=14) == 10.0  # the windows over second 14 are not back
    assert recovered_after(failed_at=14) == 10.0

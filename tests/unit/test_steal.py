"""The host's steal time beside the generator's send lag, and a measurement the generator's
self-check marks invalid measured again by itself (a bounded number of tries, each kept)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from playground.incident import analysis, steal
from playground.incident.storyresults import StoryTarget
from playground.incident.targetresults import GeneratorCheck
from playground.story import findings, run

# /proc/stat as this machine writes it (2 CPUs; user nice system idle iowait irq softirq
# steal guest guest_nice), clock ticks of 1/100 s.
STAT = """cpu  72289 0 20832 38726 1807 0 586 2934 0 0
cpu0 33218 0 9883 23461 462 0 80 1469 0 0
cpu1 39070 0 10948 15264 1344 0 506 1464 0 0
intr 1 2 3
"""


def times(at: float, steal_ticks: int, total_ticks: int) -> steal.CpuTimes:
    return steal.CpuTimes(
        at=at, steal_s=steal_ticks * steal.TICK_S, total_s=total_ticks * steal.TICK_S
    )


def test_the_machine_line_gives_its_steal_and_all_its_time():
    t = steal.parse_cpu_times(STAT, at=5.0)
    assert t is not None and t.at == 5.0
    assert t.steal_s == pytest.approx(2934 * steal.TICK_S)
    assert t.total_s == pytest.approx(
        sum([72289, 0, 20832, 38726, 1807, 0, 586, 2934]) * steal.TICK_S
    )
    assert steal.parse_cpu_times("intr 1 2\n", at=0.0) is None


def test_steal_is_put_in_the_second_of_the_run_it_happened_in():
    # Second 0 of the run at monotonic 100.0; samples a second apart from 99.5.
    samples = [times(99.5 + k, s, 200 * k) for k, s in enumerate([0, 0, 3, 3, 3, 10])]
    over = steal.over_run(samples, t0=100.0, seconds=5)
    assert over is not None
    assert over.per_second_s == pytest.approx([0.0, 0.03, 0.0, 0.0, 0.07])
    assert over.steal_s == pytest.approx(0.10) and over.share == pytest.approx(0.10 / 10.0)
    assert steal.over_run(samples[:1], t0=100.0, seconds=5) is None


def output(lags: list[tuple[float, float]]) -> analysis.GeneratorOutput:
    attempts = [
        analysis.Attempt(
            visit=i, attempt=1, intended=t, sent=t + lag, end=t + 1, outcome="ok", status=200
        )
        for i, (t, lag) in enumerate(lags)
    ]
    check = GeneratorCheck(
        valid=True, reasons=[], send_lag_p50_s=0.001, send_lag_p99_s=0.002, send_lag_max_s=0.05
    )
    return analysis.GeneratorOutput(
        attempts=attempts, check=check, loop="tokio", t0_monotonic=100.0, t0_wall=0.0, events=[]
    )


def test_a_late_send_came_with_steal_when_its_seconds_lost_as_much_cpu_as_it_was_late():
    # 20 ms stolen in second 2 only. Late sends: 15 ms in second 2 (with it), 30 ms in second
    # 2 (later than the steal explains), 80 ms across seconds 3 -> 4 and 20 ms in second 4
    # (no steal); 5 ms is not late.
    samples = [times(100.0 + k, s, 200 * k) for k, s in enumerate([0, 0, 0, 2, 2, 2, 2])]
    out = output(
        [(0.5, 0.001), (2.2, 0.015), (2.5, 0.030), (3.95, 0.080), (4.5, 0.020), (1.0, 0.005)]
    )
    st = run.host_steal(samples, out)
    assert st is not None
    assert st.late_sends == 4 and st.late_sends_with_steal == 1
    assert st.steal_s == pytest.approx(0.02)
    (finding,) = findings.steal(replace(StoryTarget(name="t"), steal=st))
    assert (
        "4 sends left more than 10 ms late, 1 of them in seconds when the host" in finding.message
    )


def test_an_invalid_measurement_is_measured_again_each_try_kept_and_counted(monkeypatch):
    p99s = iter([0.030, 0.020, 0.004, 0.001])
    made: list[int] = []

    def fake_incident(story, target, entry):
        made.append(len(entry.invalid_tries))
        p99 = next(p99s)
        check = GeneratorCheck(
            valid=p99 <= 0.010, reasons=[] if p99 <= 0.010 else [f"p99 {p99}"], send_lag_p99_s=p99
        )
        return replace(entry, check=check)

    class FakeStory:
        class run:
            class story:
                incident_delay = 2.0

        def warn(self, text: str) -> None:
            pass

    class Target:
        name = "story-x"

    monkeypatch.setattr(run, "run_incident", fake_incident)
    measured = run.run_trusted(FakeStory(), Target(), StoryTarget(name="story-x"))
    assert made == [0, 1, 2] and measured.check.valid
    assert [t.check.send_lag_p99_s for t in measured.invalid_tries] == [0.030, 0.020]
    assert [t.output for t in measured.invalid_tries] == [
        "openloop-story-x-2s-1.json",
        "openloop-story-x-2s-1-try2.json",
    ]
    (again,) = [f for f in findings.for_target(measured) if f.code == "measured-again"]
    assert "measured 3 times" in again.message and "30.0 ms, 20.0 ms" in again.message


def test_the_tries_are_bounded_and_a_last_invalid_one_stays_invalid(monkeypatch):
    def always_invalid(story, target, entry):
        return replace(
            entry, check=GeneratorCheck(valid=False, reasons=["late"], send_lag_p99_s=0.05)
        )

    class FakeStory:
        class run:
            class story:
                incident_delay = 2.0

        def warn(self, text: str) -> None:
            pass

    class Target:
        name = "story-x"

    monkeypatch.setattr(run, "run_incident", always_invalid)
    measured = run.run_trusted(FakeStory(), Target(), StoryTarget(name="story-x"))
    assert len(measured.invalid_tries) == run.MAX_TRIES - 1
    codes = {f.code for f in findings.for_target(measured)}
    assert {"generator-invalid", "measured-again"} <= codes

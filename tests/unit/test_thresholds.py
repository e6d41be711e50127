"""Every rule with a threshold, tested exactly at it and just past it: a rule written `>`
where it means `>=` (or the other way) fails here."""

from __future__ import annotations

import math

import pytest

from playground.bench import diagnosis
from playground.core import verdicts
from playground.incident import capacity, held
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

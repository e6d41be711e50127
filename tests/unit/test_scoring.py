"""The Brier score and its two baselines, against scores computed by hand."""

from __future__ import annotations

import pytest

from playground.core.odds import Frequency
from playground.incident.scoring import Setting, brier, little, majority, scores, table

# 128 threads at 60 visits/s: Little's tipping delay is 128 / 60 = 2.13 s.
EDGE = Setting("gthread at 2 s", "gunicorn-threads", 60.0, 2.0, 128, Frequency(3, 4))
PAST = Setting("gthread at 2.5 s", "gunicorn-threads", 60.0, 2.5, 128, Frequency(2, 2))
GEVENT = Setting("gevent at 2 s", "gunicorn-gevent", 60.0, 2.0, None, Frequency(0, 2))


def test_brier_by_hand() -> None:
    """p = 0.7 on 3 of 4 collapsed: 3 x 0.09 + 1 x 0.49 = 0.76 over 4 runs = 0.19;
    with 2 of 2 at p = 1 (nothing) the sum is the same over 6 runs."""
    assert brier(settings=[EDGE], forecast=lambda s: 0.7) == pytest.approx(0.19)
    forecast = {EDGE.label: 0.7, PAST.label: 1.0}
    assert brier(settings=[EDGE, PAST], forecast=lambda s: forecast[s.label]) == pytest.approx(
        0.76 / 6
    )


def test_a_perfect_and_a_coin_forecaster() -> None:
    assert brier(settings=[PAST, GEVENT], forecast=lambda s: float(s is PAST)) == 0.0
    assert brier(settings=[EDGE, PAST, GEVENT], forecast=lambda s: 0.5) == pytest.approx(0.25)


def test_littles_law_is_one_past_the_tipping_delay_only() -> None:
    assert little(EDGE) == 0.0  # 60 x 2 = 120 in flight < 128 threads
    assert little(PAST) == 1.0  # 150 > 128
    assert little(GEVENT) == 0.0  # no fixed pool
    # Little on all three: EDGE 3 x 1 = 3, PAST 0, GEVENT 0, over 8 runs.
    got = {s.name: s for s in scores(settings=[EDGE, PAST, GEVENT], model=lambda s: 0.5)}
    assert got["Little's law alone"].brier == pytest.approx(3 / 8)
    assert got["Little's law alone"].runs == 8


def test_the_majority_is_the_outcome_most_runs_had() -> None:
    """5 of 8 runs collapsed: the majority says 1 everywhere; its misses are the 3 that held
    (1 of EDGE, 2 of GEVENT): 3 / 8. On an even split it says a half."""
    assert majority([EDGE, PAST, GEVENT])(GEVENT) == 1.0
    assert majority([GEVENT])(EDGE) == 0.0
    assert majority([PAST, GEVENT])(EDGE) == 0.5
    got = {s.name: s for s in scores(settings=[EDGE, PAST, GEVENT], model=lambda s: 0.5)}
    assert got["always the majority outcome"].brier == pytest.approx(3 / 8)
    assert got["the model"].brier == pytest.approx(0.25)


def test_refuses_a_probability_outside_zero_to_one_and_nothing_to_score() -> None:
    with pytest.raises(ValueError, match="0 to 1"):
        brier(settings=[EDGE], forecast=lambda s: 1.5)
    with pytest.raises(ValueError, match="nothing to score"):
        brier(settings=[], forecast=lambda s: 0.5)


def test_the_table_shows_each_score_and_each_setting_asking_the_model_once() -> None:
    asked: list[str] = []

    def model(s: Setting) -> float:
        asked.append(s.label)
        return 0.7

    lines = table(settings=[EDGE, PAST], model=model)
    assert asked == [EDGE.label, PAST.label]
    # (3 x 0.09 + 0.49 + 2 x 0.09) / 6 = 0.94 / 6
    assert "| the model | 0.157 | 6 |" in lines
    assert "| gthread at 2 s | 3 of 4 (30-95 %) | 0.70 | 0 |" in lines

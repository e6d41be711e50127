"""The Wilson interval against figures published for it, and its edges."""

from __future__ import annotations

import pytest

from playground.core.odds import Frequency, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Brown, Cai and DasGupta (2001) and any table of Wilson's interval: 0 of 10 reaches
        # 27.75 %, 7 of 10 spans 39.68-89.22 %, 5 of 10 is symmetric about a half.
        (0, 10, 0.0, 0.2775),
        (7, 10, 0.3968, 0.8922),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_matches_the_published_figures(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_the_interval_narrows_as_repeats_grow_at_the_same_share() -> None:
    w10 = wilson(3, 10)
    w100 = wilson(30, 100)
    assert w100[1] - w100[0] < w10[1] - w10[0]
    assert w100[0] < 0.3 < w100[1]


@pytest.mark.parametrize(("k", "n"), [(0, 0), (-1, 3), (4, 3)])
def test_impossible_counts_are_refused(k: int, n: int) -> None:
    with pytest.raises(ValueError):
        wilson(k, n)
    with pytest.raises(ValueError):
        Frequency(k, n)


def test_a_frequency_reads_as_k_of_n_with_its_interval() -> None:
    assert Frequency(7, 10).text() == "7 of 10 (40-89 %)"
    assert Frequency(0, 3).text() == "0 of 3 (0-56 %)"

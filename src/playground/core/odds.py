"""How often: k of n with a 95 % interval, for verdicts measured over repeats and predicted
over draws alike.

A verdict that flips from run to run is reported as a frequency, never as one word: "collapsed
in 7 of 10 (40-89 %)". The interval is Wilson's score interval, which stays inside 0-1 and
means something at k = 0 and k = n, where the normal approximation gives a width of zero
(Wilson, "Probable inference, the law of succession, and statistical inference", JASA 1927;
the choice recommended by Brown, Cai and DasGupta, Statistical Science 2001).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


def wilson(k: int, n: int, *, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for k successes in n trials: (low, high), both in [0, 1]."""
    if n < 1:
        raise ValueError(f"an interval needs at least one trial, got n = {n}")
    if not 0 <= k <= n:
        raise ValueError(f"k must be 0 to n = {n}, got {k}")
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At k = 0 and k = n the bound is exactly 0 or 1; rounding must not move it off.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Frequency:
    """k of n: how many runs (or draws) came out one way, with its 95 % interval."""

    k: int
    n: int

    def __post_init__(self) -> None:
        wilson(self.k, self.n)  # refuses n < 1 and k outside 0..n

    @property
    def share(self) -> float:
        return self.k / self.n

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.k, self.n)

    def text(self) -> str:
        """`7 of 10 (40-89 %)`: the count first, the interval in whole percent."""
        low, high = self.interval
        return f"{self.k} of {self.n} ({100 * low:.0f}-{100 * high:.0f} %)"

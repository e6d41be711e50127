"""Queueing theory's closed forms, and how far a simulated figure may stray from one.

The formulas the model's unit tests hold it to (tests/unit/test_predict.py,
tests/unit/test_predict_theory.py), each with its source:

- Erlang B, the probability that an arrival finds all c servers busy in M/G/c/c (and, being
  insensitive to the service time's distribution beyond its mean, in any loss system with
  Poisson arrivals), by its recursion B(0, a) = 1, B(k, a) = a B(k-1, a) / (k + a B(k-1, a)),
  stable where a^c / c! overflows (Kleinrock, Queueing Systems vol. 1, 3.7; Gross & Harris,
  Fundamentals of Queueing Theory, 2.5).
- Erlang C, the probability that an arrival waits in M/M/c, from B:
  C = c B / (c - a (1 - B)) (Gross & Harris 2.3; Kleinrock 3.5).
- M/M/c/K, c servers and room for K in all: p_n = p_0 a^n / n! for n <= c and
  p_0 a^c / c! (a/c)^(n-c) for c < n <= K; an arrival is refused with probability p_K (Poisson
  arrivals see time averages) and L = sum n p_n (Gross & Harris 2.4).

A simulated mean is compared with batch means: the run's measured span cut into equal
batches, long against the queue's relaxation time so their means are nearly independent; the
spread of those means gives the standard error.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

#: How many standard errors a simulated mean may stray from its formula.
SIGMAS = 4.0


def erlang_b(c: int, a: float) -> float:
    """The probability that an arrival finds all `c` servers busy at offered load `a`."""
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(c: int, a: float) -> float:
    """The probability that an arrival waits in M/M/c at offered load a = lambda / mu < c."""
    b = erlang_b(c, a)
    return c * b / (c - a * (1 - b))


def mmck(c: int, k: int, a: float) -> tuple[float, float]:
    """M/M/c/K at offered load a = lambda / mu: the probability that an arrival is refused, and
    the mean number in the system (queued and served)."""
    weights = [
        a**n / math.factorial(n) if n <= c else a**c / math.factorial(c) * (a / c) ** (n - c)
        for n in range(k + 1)
    ]
    total = sum(weights)
    return weights[k] / total, sum(n * w for n, w in enumerate(weights)) / total


def batch_means(
    samples: Iterable[tuple[float, float]], *, start: float, end: float, batches: int = 20
) -> tuple[float, float]:
    """The mean of the values whose time falls in [start, end), and its standard error: the
    mean of each of `batches` equal spans of time, and their spread over sqrt(batches)."""
    groups: list[list[float]] = [[] for _ in range(batches)]
    width = (end - start) / batches
    for t, value in samples:
        if start <= t < end:
            groups[min(batches - 1, int((t - start) / width))].append(value)
    means = [statistics.fmean(g) for g in groups]
    return statistics.fmean(means), statistics.stdev(means) / math.sqrt(batches)


def assert_agrees(
    estimate: tuple[float, float], expected: float, *, precision: float, allowance: float = 0.0
) -> None:
    """A simulated (mean, standard error) agrees with a formula's `expected`: within SIGMAS
    standard errors (plus `allowance` x expected, where the formula is itself an
    approximation), from a run long enough that SIGMAS standard errors are at most `precision`
    x expected, so that noise cannot hide a wrong model."""
    mean, se = estimate
    assert SIGMAS * se <= precision * expected, (
        f"the run is too short to tell: {SIGMAS:g} x {se:.4g} > {precision:g} x {expected:.4g}"
    )
    assert abs(mean - expected) <= SIGMAS * se + allowance * expected, (
        f"simulated {mean:.4g} +- {se:.2g}, the formula {expected:.4g}"
    )

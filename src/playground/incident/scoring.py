"""Scoring predicted odds of collapse against repeats: the Brier score beside two baselines.

A setting (a target at one rate and incident delay) measured n times collapsed in k of them.
A forecaster gives each setting a probability p of collapse; its Brier score is the mean over
the runs of (p - outcome)^2, outcome 1 for a run that collapsed and 0 for one that held
(Brier, "Verification of forecasts expressed in terms of probability", Monthly Weather Review
1950): 0 is a perfect forecaster, 0.25 the one that always says a half. A setting of k of n
adds k x (p - 1)^2 + (n - k) x p^2 to the sum.

Two baselines stand beside the model, each from what is known without it:

- Little's law alone: collapse with probability 1 where rate x incident delay (the requests in
  flight it asks for) is above the pool (workers x threads), else 0
  (:func:`playground.incident.capacity.predict`'s `over`).
- The majority: every setting given the outcome most of the scored runs had (1 or 0; a half
  where they split evenly).

The model's probabilities come from a callable, so any forecaster can be scored the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from playground.core.odds import Frequency
from playground.incident import capacity


@dataclass(frozen=True)
class Setting:
    """One setting and how often it collapsed over its measured repeats."""

    label: str
    target: str
    rate: float
    incident_delay: float
    #: requests the pool holds at once (workers x threads); None: no fixed pool (gevent)
    pool: int | None
    collapsed: Frequency


#: A forecaster: a setting's probability of collapse, 0 to 1.
Forecast = Callable[[Setting], float]


@dataclass(frozen=True)
class Score:
    """One forecaster's Brier score over the scored runs."""

    name: str
    brier: float
    runs: int


def brier(*, settings: Sequence[Setting], forecast: Forecast) -> float:
    """The mean over every run of every setting of (p - outcome)^2."""
    return brier_of([(s.label, s.collapsed, forecast(s)) for s in settings])


def brier_of(forecasts: Sequence[tuple[str, Frequency, float]]) -> float:
    """The Brier score of (label, how often the event happened, its forecast p) per setting:
    the mean over every run of (p - outcome)^2, whatever the event."""
    total, runs = 0.0, 0
    for label, happened, p in forecasts:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{label}: a probability must be 0 to 1, got {p}")
        k, n = happened.k, happened.n
        total += k * (p - 1.0) ** 2 + (n - k) * p**2
        runs += n
    if runs == 0:
        raise ValueError("nothing to score: no runs")
    return total / runs


def brier_table(scores: Sequence[tuple[str, float]], repeats: int) -> list[str]:
    """Forecasters' Brier scores over the same repeats, as a Markdown table."""
    lines = ["| forecaster | Brier score | repeats |", "|---|---|---|"]
    return lines + [f"| {name} | {value:.3f} | {repeats} |" for name, value in scores]


def little(setting: Setting) -> float:
    """Little's law alone: 1 where the incident asks the pool for more than it holds."""
    if setting.pool is None:
        return 0.0
    over = capacity.predict(
        workers=1,
        threads=setting.pool,
        upstream_s=setting.incident_delay,
        rate=setting.rate,
        timeout_s=1.0,
    ).over
    return 1.0 if over else 0.0


def majority(settings: Sequence[Setting]) -> Forecast:
    """Always the outcome most of the scored runs had: 1, 0, or a half on a tie."""
    k = sum(s.collapsed.k for s in settings)
    n = sum(s.collapsed.n for s in settings)
    p = 1.0 if 2 * k > n else 0.0 if 2 * k < n else 0.5
    return lambda _setting: p


def scores(*, settings: Sequence[Setting], model: Forecast) -> list[Score]:
    """The model, Little's law and the majority, each scored over the same runs."""
    runs = sum(s.collapsed.n for s in settings)
    return [
        Score(name, brier(settings=settings, forecast=f), runs)
        for name, f in (
            ("the model", model),
            ("Little's law alone", little),
            ("always the majority outcome", majority(settings)),
        )
    ]


def table(*, settings: Sequence[Setting], model: Forecast) -> list[str]:
    """The scores as a Markdown table, then each setting's k of n beside the model's p (the
    model asked once per setting: a forecast can be a run of the model)."""
    odds = {s.label: model(s) for s in settings}
    lines = ["| forecaster | Brier score | runs |", "|---|---|---|"]
    lines += [
        f"| {s.name} | {s.brier:.3f} | {s.runs} |"
        for s in scores(settings=settings, model=lambda s: odds[s.label])
    ]
    lines += [
        "",
        "| setting | collapsed, measured | the model's p | Little's law |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {s.label} | {s.collapsed.text()} | {odds[s.label]:.2f} | {little(s):.0f} |"
        for s in settings
    ]
    return lines

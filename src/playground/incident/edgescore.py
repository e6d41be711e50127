"""The model scored where a pool tips: each setting's measured k of n beside the model's P,
and the Brier score beside the references, all read from records (docs/runs/).

A scored setting names the story runs whose repeats it counts and the prediction run whose
draws give the model's P(collapse) (collapsed or not recovered, over its draws). A repeat
counts as collapsed under held.HELD_SHARE of the visits during the incident served, and only
if its generator kept its schedule. Beside the model stand five references
(:mod:`playground.incident.scoring`): a coin (always a half), always the majority outcome,
Little's law alone, the base rate (every setting given the share of collapses over all the
scored repeats) and the floor (each setting given its own measured frequency: no forecast
that gives one probability per setting scores lower).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from playground.core.odds import Frequency
from playground.core.records import RecordError
from playground.incident import held, scoring
from playground.incident.predictrecord import PredictRecord
from playground.incident.runrecords import RunRecord


@dataclass(frozen=True)
class ScoredSetting:
    """One setting the page scores: what was measured, where, and the model's run."""

    label: str
    target: str  # as the records name it, a remedy included: `gunicorn-threads+deadline`
    pool: int | None  # workers x threads; None: no fixed pool
    rate: float
    incident_delay: float
    measured: tuple[str, ...]  # the story runs whose repeats count
    model: str  # the prediction run whose draws give P


def measured(setting: ScoredSetting, records: Sequence[RunRecord]) -> Frequency:
    """The setting's collapses over the trusted repeats of its runs."""
    by_id = {r.run_id: r for r in records}
    outcomes = []
    for run_id in setting.measured:
        if run_id not in by_id:
            raise RecordError(f"{setting.label}: no record of run {run_id} in docs/runs/")
        outcomes += [
            not held.served_enough(t.visits_served_during)
            for t in by_id[run_id].targets
            if t.name == setting.target and t.valid and t.visits_served_during is not None
        ]
    if not outcomes:
        raise RecordError(f"{setting.label}: its runs hold no trusted repeat of {setting.target}")
    return Frequency(sum(outcomes), len(outcomes))


def model_p(setting: ScoredSetting, predictions: Sequence[PredictRecord]) -> float:
    """The model's P(collapse) at the setting: its prediction run's draws that collapsed."""
    found = [
        t
        for p in predictions
        if p.run_id == setting.model
        for t in p.targets
        if t.name == setting.target and t.draws
    ]
    if len(found) != 1:
        raise RecordError(f"{setting.label}: run {setting.model} has no odds for {setting.target}")
    (t,) = found
    return ((t.collapsed or 0) + (t.not_recovered or 0)) / (t.draws or 1)


def tables(
    settings: Sequence[ScoredSetting],
    records: Sequence[RunRecord],
    predictions: Sequence[PredictRecord],
) -> list[str]:
    """The Brier scores of the model and the five references, then each setting's row."""
    scored = [
        scoring.Setting(
            label=s.label,
            target=s.target,
            rate=s.rate,
            incident_delay=s.incident_delay,
            pool=s.pool,
            collapsed=measured(s, records),
        )
        for s in settings
    ]
    p = {s.label: model_p(s, predictions) for s in settings}
    k = sum(s.collapsed.k for s in scored)
    n = sum(s.collapsed.n for s in scored)
    forecasters = (
        ("the model", lambda s: p[s.label]),
        ("a coin: always a half", lambda s: 0.5),
        ("always the majority outcome", scoring.majority(scored)),
        ("Little's law alone", scoring.little),
        ("the base rate of these repeats", lambda s: k / n),
        ("the floor: each setting's own frequency", lambda s: s.collapsed.share),
    )
    lines = ["| forecaster | Brier score | repeats |", "|---|---|---|"]
    lines += [
        f"| {name} | {scoring.brier(settings=scored, forecast=f):.3f} | {n} |"
        for name, f in forecasters
    ]
    lines += [
        "",
        "| setting | collapsed, measured | the model's P(collapse) | off by | Little's law |",
        "|---|---|---|---|---|",
    ]
    for s in scored:
        off = p[s.label] - s.collapsed.share
        little = "collapses" if scoring.little(s) else "holds"
        lines.append(
            f"| {s.label} | {s.collapsed.text()} | {p[s.label]:.2f} | {off:+.2f} | {little} |"
        )
    return lines


#: The settings docs/predict.md scores ("Scored where a pool tips"): repeats measured after the
#: model's commit, alone on the machine, and the model's 96 draws at each
#: (`.venv/bin/playground predict TARGET --incident-delay D --json`).
SCORED = (
    ScoredSetting(
        label="gunicorn-threads 2 x 64 at 1.7 s",
        target="gunicorn-threads",
        pool=128,
        rate=60.0,
        incident_delay=1.7,
        measured=("20261128-151053-story",),
        model="20261128-154450-predict",
    ),
    ScoredSetting(
        label="uwsgi-threads 2 x 64 at 2.3 s",
        target="uwsgi-threads",
        pool=128,
        rate=60.0,
        incident_delay=2.3,
        measured=("20261128-153042-story",),
        model="20261128-154503-predict",
    ),
)

"""The model scored on what follows a collapse: at each setting :mod:`.edgescore` scores, how
often the pool did not come back within the run, measured and in the model's draws.

A repeat counts as not recovered where it collapsed (under held.HELD_SHARE of the visits during
the incident served) and no recovery was seen before the run ended, by the story's one rule
(:func:`playground.incident.held.outcome`); the model's P(not recovered) is its draws that did
not come back of all its draws. Beside the model: a coin, the base rate of these repeats and
the floor (each setting given its own frequency). Little's law says nothing about recovery and
is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from playground.core.odds import Frequency
from playground.core.records import RECORDS_DIR
from playground.incident import edgescore, held, scoring
from playground.incident.edgescore import ScoredSetting
from playground.incident.predictrecord import PredictRecord
from playground.incident.runrecords import RunRecord, TargetRecord


def did_not_recover(t: TargetRecord) -> bool:
    """The repeat collapsed and was not back before its run ended."""
    return held.outcome(t.visits_served_during, t.recovery_s) == held.NOT_RECOVERED


@dataclass(frozen=True)
class RecoveryPoint:
    """One scored setting: its repeats that did not come back, and the model's draws."""

    label: str
    measured: Frequency
    draws: Frequency

    @property
    def off(self) -> float:
        """The model's P(not recovered) less the measured frequency."""
        return self.draws.share - self.measured.share


def points(
    settings: Sequence[ScoredSetting],
    records: Sequence[RunRecord],
    predictions: Sequence[PredictRecord],
) -> list[RecoveryPoint]:
    out = []
    for s in settings:
        repeats = edgescore.trusted(s, records)
        odds = edgescore.model_odds(s, predictions)
        out.append(
            RecoveryPoint(
                label=s.label,
                measured=Frequency(sum(map(did_not_recover, repeats)), len(repeats)),
                draws=Frequency(odds.not_recovered or 0, odds.draws or 1),
            )
        )
    return out


def scores(scored: Sequence[RecoveryPoint]) -> list[tuple[str, float]]:
    """The Brier score of the model, a coin, the base rate and the floor, in that order."""
    k = sum(x.measured.k for x in scored)
    n = sum(x.measured.n for x in scored)
    forecasters = (
        ("the model", lambda x: x.draws.share),
        ("a coin: always a half", lambda x: 0.5),
        ("the base rate of these repeats", lambda x: k / n),
        ("the floor: each setting's own frequency", lambda x: x.measured.share),
    )
    return [
        (name, scoring.brier_of([(x.label, x.measured, f(x)) for x in scored]))
        for name, f in forecasters
    ]


def tables(
    settings: Sequence[ScoredSetting],
    records: Sequence[RunRecord],
    predictions: Sequence[PredictRecord],
) -> list[str]:
    """The Brier scores, then each setting's measured k of n beside the model's P."""
    scored = points(settings, records, predictions)
    lines = scoring.brier_table(scores(scored), sum(x.measured.n for x in scored))
    lines += [
        "",
        "| setting | not recovered, measured | the model's P(not recovered) (its draws' 95 %) "
        "| off by |",
        "|---|---|---|---|",
    ]
    for x in scored:
        low, high = x.draws.interval
        lines.append(
            f"| {x.label} | {x.measured.text()} | {x.draws.share:.2f} ({low:.2f}-{high:.2f}) "
            f"| {x.off:+.2f} |"
        )
    return lines


def summary(scored: Sequence[RecoveryPoint]) -> list[str]:
    """One sentence for the page's first screen: the model's P(not recovered) against the best
    reference, and where it is off by more than edgescore.TARGET."""
    (_, model), _coin, (_, base), (_, floor) = scores(scored)
    missed = [x for x in scored if abs(x.off) > edgescore.TARGET]
    where = "; ".join(
        f"{x.label}: P {x.draws.share:.2f}, {x.measured.text()} did not come back" for x in missed
    )
    return [
        f"On what follows a collapse it is scored on the same repeats: its P(not recovered) "
        f"scores {model:.3f} against the base rate's {base:.3f} (the floor {floor:.3f}), "
        + (
            "and is within the target at every setting."
            if not missed
            else f"{'better' if model <= base else 'worse'} than the base rate, off by more "
            f"than {edgescore.TARGET:.2f} at {len(missed)} (" + where + ")."
        )
    ]


def error_lines(target: str, *, directory: Path = RECORDS_DIR, split: bool = False) -> list[str]:
    """For the `predict` command: how far the model's P(not recovered) was off at `target`'s
    scored settings (`split`: drawing its machine's split, :data:`.edgescore.SPLIT_SCORED`),
    beside its Brier score and the base rate's. Empty without the records or a scored setting
    of `target`."""
    scored = edgescore.at_hand(points, directory, split=split)
    if not scored:
        return []
    settings = edgescore.SPLIT_SCORED if split else edgescore.SCORED
    mine = [x for s, x in zip(settings, scored, strict=True) if s.target == target]
    if not mine:
        return []
    (_, model), _coin, (_, base), _floor = scores(scored)
    worst = max(mine, key=lambda x: abs(x.off))
    return [
        f"P(not recovered), scored the same way: off by {worst.off:+.2f} at "
        f"{worst.label.removeprefix(target + ' ')},",
        f"where {worst.measured.text()} did not come back; Brier {model:.3f}, base rate {base:.3f}",
    ]

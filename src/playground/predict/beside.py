"""The model's prediction beside a measured story run: each target again, in the model, with
the run's own settings, and where the two disagree (the verdict differs, or the visits served
during the incident are more than :data:`SERVED_POINTS` points apart)."""

from __future__ import annotations

from playground.errors import PlaygroundError
from playground.incident import verdict
from playground.predict.run import predict_target
from playground.scenarios import resolve_story
from playground.storymodel import PredictedFigures, StoryRun, StorySummary, StoryTarget

#: Visits served during the incident further apart than this (percentage points) disagree.
SERVED_POINTS = 10.0


def differences(measured: StorySummary, predicted: StorySummary) -> list[str]:
    out = []
    said = verdict.outcome(predicted.visits_served_during, predicted.recovery_s)
    saw = verdict.outcome(measured.visits_served_during, measured.recovery_s)
    if said != saw:
        out.append(f"verdict: predicted {said}, measured {saw}")
    a, b = measured.visits_served_during, predicted.visits_served_during
    if a is not None and b is not None and abs(a - b) * 100 > SERVED_POINTS:
        out.append(f"visits served during: predicted {100 * b:.0f}%, measured {100 * a:.0f}%")
    return out


def figures(target: StoryTarget, predicted: StorySummary | str) -> PredictedFigures | None:
    """The model's figures beside a measured target (`predicted`: the model's summary, or why
    it has none); None for a target that was not measured."""
    if target.summary is None:
        return None
    if isinstance(predicted, str):
        return PredictedFigures(error=predicted)
    s = predicted
    return PredictedFigures(
        verdict=verdict.outcome(s.visits_served_during, s.recovery_s),
        visits_served_during=s.visits_served_during,
        goodput_during=s.goodput_during,
        recovery_s=s.recovery_s,
        amplification=s.amplification,
        differs=differences(target.summary, s),
    )


def _predict(name: str, run: StoryRun) -> StorySummary | str:
    try:
        (registered,) = resolve_story([name])
        summary = predict_target(registered, run.story).summary
    except PlaygroundError as exc:
        return str(exc)
    assert summary is not None
    return summary


def attach(run: StoryRun) -> None:
    """Every measured target of the run gets the model's figures beside its own (each target
    predicted once, whatever its repeats)."""
    if run.predicted:
        return
    cache: dict[str, StorySummary | str] = {}
    for t in run.targets:
        if t.summary is None:
            continue
        if t.name not in cache:
            cache[t.name] = _predict(t.name, run)
        t.predicted = figures(t, cache[t.name])

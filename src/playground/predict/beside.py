"""The model's prediction beside a measured story run: each target again, in the model, with
the run's own settings, and each step of its sweep and of its cliff; and where the two disagree
(the verdict differs, or the visits served during the incident, or in a rate step's window,
are more than :data:`SERVED_POINTS` points apart).

A target through the incident and a cliff's incident delay go through
:func:`~playground.predict.run.predict_target` (the delay set as measured); a rate step of the
sweep or of the cliff through :func:`~playground.predict.run.rate_step`, with the step's
delay, windows and the run's arrivals and seed. Each step simulates its own length only, and
the steps are spread over the cores (:func:`~playground.predict.run.each`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from playground.core.errors import PlaygroundError
from playground.core.scenarios import resolve_story
from playground.core.target import Target
from playground.incident import held
from playground.incident.oddsresults import Odds
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import (
    DelayStep,
    StoryRun,
    StoryTarget,
    SweepStep,
)
from playground.incident.targetresults import PredictedFigures, StorySummary
from playground.predict.draws import predict_odds
from playground.predict.run import each, predict_target, rate_step
from playground.predict.system import system_for

#: Visits served during the incident further apart than this (percentage points) disagree.
SERVED_POINTS = 10.0
#: The model's draws of each measured target: its P(collapse) beside the measured verdict, the
#: figures those of the representative draw (:func:`.draws.predict_odds`). A cliff's delays and
#: the rate steps stay one draw each.
DRAWS = 16


def _disagree(
    *, saw: str, said: str, measured: float | None, predicted: float | None, what: str
) -> list[str]:
    out = []
    if said != saw:
        out.append(f"verdict: predicted {said}, measured {saw}")
    if measured is not None and predicted is not None:
        if abs(measured - predicted) * 100 > SERVED_POINTS:
            out.append(f"{what}: predicted {100 * predicted:.0f}%, measured {100 * measured:.0f}%")
    return out


def differences(measured: StorySummary, predicted: StorySummary) -> list[str]:
    return _disagree(
        saw=held.outcome(measured.visits_served_during, measured.recovery_s),
        said=held.outcome(predicted.visits_served_during, predicted.recovery_s),
        measured=measured.visits_served_during,
        predicted=predicted.visits_served_during,
        what="visits served during",
    )


def figures(
    target: StoryTarget, predicted: StorySummary | str, odds: Odds | None = None
) -> PredictedFigures | None:
    """The model's figures beside a measured target (`predicted`: the model's summary, or why
    it has none; `odds`: its draws, whose representative the summary is); None for a target
    that was not measured."""
    if target.summary is None:
        return None
    if isinstance(predicted, str):
        return PredictedFigures(error=predicted)
    s = predicted
    collapsed = (
        None
        if odds is None
        else odds.frequency(held.COLLAPSED).k + odds.frequency(held.NOT_RECOVERED).k
    )
    return PredictedFigures(
        draws=None if odds is None else len(odds.draws),
        collapsed_draws=collapsed,
        verdict=held.outcome(s.visits_served_during, s.recovery_s),
        visits_served_during=s.visits_served_during,
        goodput_during=s.goodput_during,
        recovery_s=s.recovery_s,
        amplification=s.amplification,
        differs=differences(target.summary, s),
    )


def rate_figures(measured: SweepStep, predicted: SweepStep | str) -> PredictedFigures:
    """The model's figures beside a measured rate step (`predicted`: the model's step, or why
    it has none)."""
    if isinstance(predicted, str):
        return PredictedFigures(error=predicted)
    p = predicted
    said = held.step_outcome(p)
    return PredictedFigures(
        verdict=said,
        visits_served_during=p.visits_served,
        goodput_during=p.goodput_per_s,
        amplification=p.attempts_per_s / p.offered_per_s if p.offered_per_s else None,
        differs=_disagree(
            saw=held.step_outcome(measured),
            said=said,
            measured=measured.visits_served,
            predicted=p.visits_served,
            what="visits served",
        ),
    )


def delay_figures(measured: DelayStep, predicted: StoryTarget | str) -> PredictedFigures | None:
    """The model's figures beside a cliff's measured incident delay; None for a delay that
    was not measured."""
    if measured.error is not None or measured.visits_served_during is None:
        return None
    if isinstance(predicted, str):
        return PredictedFigures(error=predicted)
    s = predicted.summary
    assert s is not None
    said = held.outcome(s.visits_served_during, s.recovery_s)
    return PredictedFigures(
        verdict=said,
        visits_served_during=s.visits_served_during,
        goodput_during=s.goodput_during,
        recovery_s=s.recovery_s,
        amplification=s.amplification,
        lasted_s=held.lasted(predicted),
        differs=_disagree(
            saw=held.outcome(measured.visits_served_during, measured.recovery_s),
            said=said,
            measured=measured.visits_served_during,
            predicted=s.visits_served_during,
            what="visits served during",
        ),
    )


def _modelled(name: str, settings: StorySettings) -> Target | str:
    """The registry's target as the model runs it, or why the model cannot."""
    try:
        (registered,) = resolve_story([name])
        system_for(registered, settings)
    except PlaygroundError as exc:
        return str(exc)
    return registered


@dataclass(frozen=True)
class _Incident:
    """The incident in the model: a target's draws (`draws` > 1), or a cliff's delay once."""

    target: Target
    settings: StorySettings
    draws: int = 1

    def __call__(self) -> StoryTarget:
        if self.draws > 1:
            return predict_odds(self.target, self.settings, draws=self.draws, jobs=1)
        return predict_target(self.target, self.settings)


@dataclass(frozen=True)
class _Rate:
    """One rate step in the model, as the sweep or the cliff measured it."""

    target: Target
    settings: StorySettings
    rate: float
    sweep: SweepSettings

    def __call__(self) -> SweepStep:
        w = self.sweep
        return rate_step(
            self.target,
            self.settings,
            self.rate,
            delay=w.delay,
            warmup_s=w.warmup_s,
            measure_s=w.measure_s,
            arrival=self.settings.arrival,
        )


def _call(job: _Incident | _Rate) -> StoryTarget | SweepStep:
    return job()


def attach(run: StoryRun) -> None:
    """Every measured target of the run gets the model's figures beside its own (each target
    predicted once, whatever its repeats), and so does every step of its sweep and its cliff.
    A target the model does not cover gets the reason instead."""
    if run.predicted:
        return
    s = run.story
    names = {t.name for t in run.targets if t.summary is not None}
    names |= {m.name for m, _ in run.rate_sweeps()}
    names |= {c.name for c in (run.cliff.targets if run.cliff else [])}
    modelled = {name: _modelled(name, s) for name in sorted(names)}
    jobs: dict[tuple[object, ...], _Incident | _Rate] = {}
    for t in run.targets:
        if t.summary is not None and isinstance(target := modelled[t.name], Target):
            jobs[(t.name,)] = _Incident(target, s, DRAWS)
    for m, w in run.rate_sweeps():
        if isinstance(target := modelled[m.name], Target):
            for st in m.steps:
                jobs[(m.name, w.delay, st.rate, w.warmup_s, w.measure_s)] = _Rate(
                    target, s, st.rate, w
                )
    for c in run.cliff.targets if run.cliff else []:
        if isinstance(target := modelled[c.name], Target):
            for d in c.delays:
                at = replace(s, incident_delay=d.incident_delay)
                jobs[(c.name, d.incident_delay)] = _Incident(target, at)
    keys = list(jobs)
    done = dict(zip(keys, each(_call, [jobs[k] for k in keys]), strict=True))

    def model(name: str, key: tuple[object, ...]) -> StoryTarget | SweepStep | str:
        why = modelled[name]
        return why if isinstance(why, str) else done[key]

    for t in run.targets:
        if t.summary is not None:
            entry = model(t.name, (t.name,))
            assert not isinstance(entry, SweepStep)
            summary = entry if isinstance(entry, str) else entry.summary
            assert summary is not None
            t.predicted = figures(t, summary, None if isinstance(entry, str) else entry.odds)
    for m, w in run.rate_sweeps():
        for i, st in enumerate(m.steps):
            step = model(m.name, (m.name, w.delay, st.rate, w.warmup_s, w.measure_s))
            assert not isinstance(step, StoryTarget)
            m.steps[i] = replace(st, predicted=rate_figures(st, step))
    for c in run.cliff.targets if run.cliff else []:
        for i, d in enumerate(c.delays):
            entry = model(c.name, (c.name, d.incident_delay))
            assert not isinstance(entry, SweepStep)
            c.delays[i] = replace(d, predicted=delay_figures(d, entry))

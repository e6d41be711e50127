"""The rows a story run's record keeps beside its incident's targets: each step of a sweep of
offered load, each target's closed loop under ab, each cross-check of the generator against
oha. Each is what a page reads of the run, rounded as the record keeps figures, nothing raw.

:mod:`playground.incident.runrecords` holds them in a run's record (`sweep`, `closed_loop`,
`crosschecks`) and writes them from the run's results with the functions below.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.core import records
from playground.core.jsonmodel import doc
from playground.incident.storyresults import CrossCheck, StoryRun
from playground.incident.targetresults import ClosedLoop, ToolFigures

_rounded = records.rounded


@dataclass(frozen=True)
class SweepStepRecord:
    """One offered rate of one target, the third party at one delay throughout."""

    target: str = doc("target name, as `playground story` takes it", "")
    delay_s: float = doc("the third party's delay through the sweep, s", 0.0)
    rate: float = doc("offered visits per second (the setting)", 0.0)
    goodput_per_s: float = doc("2xx answers per second that ended in the measured window", 0.0)
    attempts_per_s: float = doc("attempts per second, reloads included", 0.0)
    timeouts: int = doc("attempts that timed out in the window", 0)
    visits_served: float | None = doc("share of the window's visits served, reloads included")
    latency_p99_s: float | None = doc("user latency p99 from the intended send, s")
    valid: bool | None = doc("the generator's self-check for the step: it kept its schedule")


@dataclass(frozen=True)
class ClosedLoopRecord:
    """One target's incident put to ab instead (`--closed-loop`)."""

    target: str = doc("target name", "")
    repeat: int = doc("which measurement of this target", 1)
    concurrency: int = doc("ab -c", 0)
    per_s_before: float | None = doc("requests ab finished per second before the incident")
    per_s_during: float | None = doc("... during it")
    per_s_after: float | None = doc("... after it")
    latency_max_s: float | None = doc("ab's longest response time over the run, s")
    failed: int = doc("ab's Failed requests", 0)
    non_2xx: int = doc("ab's Non-2xx responses", 0)


@dataclass(frozen=True)
class CrossCheckRecord:
    """The same constant load from the playground's generator and from oha."""

    target: str = doc("target name", "")
    rate: float = doc("requests per second offered by both", 0.0)
    openloop_goodput_per_s: float | None = doc("the generator's 2xx answers per second")
    oha_goodput_per_s: float | None = doc("oha's 2xx answers per second")
    openloop_p50_s: float | None = doc("the generator's p50 from the scheduled send, s")
    oha_p50_s: float | None = doc("oha's p50 from the scheduled send, s")
    openloop_p99_s: float | None = doc("the generator's p99, s")
    oha_p99_s: float | None = doc("oha's p99, s")
    agree: bool | None = doc("within the tolerance on every figure; null: not measured")


def sweep_steps(run: StoryRun) -> list[SweepStepRecord]:
    """Each step of the run's sweep (`--sweep`), target by target, rate by rate."""
    if run.sweep is None:
        return []
    delay = run.sweep.settings.delay
    return [
        SweepStepRecord(
            target=m.name.removeprefix("story-"),
            delay_s=delay,
            rate=step.rate,
            goodput_per_s=_rounded(step.goodput_per_s, 2) or 0.0,
            attempts_per_s=_rounded(step.attempts_per_s, 2) or 0.0,
            timeouts=step.timeouts,
            visits_served=_rounded(step.visits_served, 4),
            latency_p99_s=_rounded(step.latency_p99_s, 3),
            valid=None if step.check is None else step.check.valid,
        )
        for m in run.sweep.targets
        for step in m.steps
    ]


def _per_s(loop: ClosedLoop, phase: str) -> float | None:
    found = [p for p in loop.phases if p.name == phase]
    return _rounded(found[0].per_s, 2) if found else None


def closed_loops(run: StoryRun) -> list[ClosedLoopRecord]:
    """Each target's closed loop, where the run measured one."""
    return [
        ClosedLoopRecord(
            target=t.name.removeprefix("story-"),
            repeat=t.repeat,
            concurrency=loop.concurrency,
            per_s_before=_per_s(loop, "before"),
            per_s_during=_per_s(loop, "during"),
            per_s_after=_per_s(loop, "after"),
            latency_max_s=_rounded(loop.latency_max_s, 3),
            failed=loop.failed,
            non_2xx=loop.non_2xx,
        )
        for t in run.targets
        if (loop := t.closed_loop) is not None
    ]


def _goodput(figures: ToolFigures | None) -> float | None:
    return None if figures is None else _rounded(figures.goodput_per_s, 2)


def _latency(figures: ToolFigures | None, which: str) -> float | None:
    return None if figures is None else _rounded(getattr(figures, which), 4)


def _crosscheck(c: CrossCheck) -> CrossCheckRecord:
    measured = c.error is None and c.openloop is not None and c.oha is not None
    return CrossCheckRecord(
        target=c.target.removeprefix("story-"),
        rate=c.rate,
        openloop_goodput_per_s=_goodput(c.openloop),
        oha_goodput_per_s=_goodput(c.oha),
        openloop_p50_s=_latency(c.openloop, "latency_p50_s"),
        oha_p50_s=_latency(c.oha, "latency_p50_s"),
        openloop_p99_s=_latency(c.openloop, "latency_p99_s"),
        oha_p99_s=_latency(c.oha, "latency_p99_s"),
        agree=not c.differences if measured else None,
    )


def crosschecks(run: StoryRun) -> list[CrossCheckRecord]:
    """Each cross-check the run made (`--cross-check`)."""
    return [_crosscheck(c) for c in run.crosschecks]

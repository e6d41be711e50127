"""A prediction as a story run: the simulation's records through the story's own analysis.

The same per-second rows, summary, verdicts and chart as a measured target
(:mod:`playground.incident`), stored as a :class:`~playground.incident.storyresults.StoryRun` marked
`predicted`, so `playground report` draws it and `playground compare` sets it beside a
measured run. Sweeps: goodput against offered load at a fixed delay (`rate`), and the whole
incident at a range of delays (`delay`), each beside Little's law
(:mod:`playground.incident.capacity`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TypeVar

from playground.core.target import Target
from playground.incident import analysis, capacity, held
from playground.incident.settings import StorySettings
from playground.incident.storyresults import DelayStep, StoryTarget, SweepStep, SweepTarget
from playground.incident.targetresults import Incident, StorySecond
from playground.predict import schedule
from playground.predict.simulate import Records, Simulation
from playground.predict.system import system_for

T = TypeVar("T")
R = TypeVar("R")


def each(fn: Callable[[T], R], items: Iterable[T], *, jobs: int | None = None) -> list[R]:
    """`fn` over `items`, in order, in `jobs` processes (default: one per core; each
    simulation is independent and single-threaded, and seeded by its item alone, so the
    answer is the same whatever `jobs` is)."""
    items = list(items)
    jobs = min(len(items), jobs or os.cpu_count() or 1)
    if jobs < 2:
        return [fn(item) for item in items]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, items))


def arrivals(settings: StorySettings) -> list[float]:
    """Every visit's intended start, as the generator sends them (visit k starts at [k])."""
    return schedule.arrival_times(
        rate=settings.rate, duration=settings.duration, arrival=settings.arrival, seed=settings.seed
    )


def simulate(
    target: Target,
    settings: StorySettings,
    *,
    incident: bool = True,
    ended: Callable[[int, bool], bool] | None = None,
    sampled: bool = True,
) -> Records:
    """One run of the model (`ended`, `sampled`: :class:`.simulate.Simulation`'s)."""
    system = system_for(target, settings)
    sim = Simulation(system, settings, delay=settings.normal_delay, incident=incident, ended=ended)
    return sim.run(arrivals(settings), sampled=sampled)


def _rows(records: Records, settings: StorySettings) -> list[StorySecond]:
    return analysis.per_second(
        records.attempts,
        seconds=int(settings.duration) + 1,
        server=records.samples,
        t0_monotonic=0.0,
        access=[(r.end_wall, r.status) for r in records.access],
    )


def predict_target(target: Target, settings: StorySettings) -> StoryTarget:
    """One target through the incident, predicted: a StoryTarget as a measurement makes it."""
    started = time.monotonic()
    system = system_for(target, settings)
    records = simulate(target, settings)
    rows = _rows(records, settings)
    incident = Incident(start=settings.before_s, seconds=settings.incident_s)
    summary = analysis.summarise(
        attempts=records.attempts,
        rows=rows,
        incident=incident,
        arrivals_end=settings.duration,
        timeout=settings.timeout,
        access=records.access,
        calls=records.calls,
    )
    entry = StoryTarget.about(target, workers=system.workers, per_worker=system.per_worker)
    entry = replace(
        entry,
        incident=incident,
        adds_up=analysis.check_adds_up(records.attempts, rows),
        summary=summary,
        seconds=rows,
        prediction=capacity.predict(
            workers=system.workers,
            threads=system.per_worker,
            upstream_s=settings.incident_delay,
            rate=settings.rate,
            timeout_s=settings.timeout,
        )
        if target.model == "threads"
        else None,
    )
    entry.findings = held.incident(entry)
    entry.wall_s = round(time.monotonic() - started, 2)
    return entry


def rate_step(
    target: Target,
    settings: StorySettings,
    rate: float,
    *,
    delay: float,
    warmup_s: float,
    measure_s: float,
    arrival: str = "constant",
) -> SweepStep:
    """One offered rate at a fixed delay, no incident, as the sweep's step: arrivals for the
    step's own length (warm-up and window, as the generator sends them), every visit followed
    to its end. `arrival`: constant (`playground predict --sweep rate`), or the measured run's."""
    step = replace(
        settings,
        rate=rate,
        normal_delay=delay,
        incident_delay=delay + 1,
        arrival=arrival,
        before_s=warmup_s,
        incident_s=measure_s,
        after_s=0,
    )
    records = simulate(target, step, incident=False)
    end = warmup_s + measure_s
    window = [a for a in records.attempts if warmup_s <= a.end < end]
    arrived = [v for v in analysis.visits_from(records.attempts) if warmup_s <= v.start < end]
    served = [v.latency for v in arrived if v.succeeded]
    return SweepStep(
        rate=rate,
        offered_per_s=sum(1 for v in arrived) / measure_s,
        attempts_per_s=sum(1 for a in records.attempts if warmup_s <= a.intended < end) / measure_s,
        goodput_per_s=sum(1 for a in window if a.outcome == analysis.OK) / measure_s,
        timeouts=sum(1 for a in window if a.outcome == "timeout"),
        errors=sum(1 for a in window if a.outcome not in (analysis.OK, "timeout")),
        visits=len(arrived),
        visits_served=len(served) / len(arrived) if arrived else None,
        latency_p50_s=analysis.percentile(served, 50),
        latency_p99_s=analysis.percentile(served, 99),
        window_s=measure_s,
    )


def rate_sweep(
    target: Target,
    settings: StorySettings,
    *,
    rates: list[float],
    delay: float,
    warmup_s: float = 5.0,
    measure_s: float = 20.0,
    jobs: int | None = None,
) -> SweepTarget:
    system = system_for(target, settings)
    return SweepTarget(
        name=target.name,
        title=target.title,
        model=target.model,
        server=target.server,
        capacity_per_s=system.pool / delay if target.model == "threads" else None,
        steps=each(
            partial(
                rate_step, target, settings, delay=delay, warmup_s=warmup_s, measure_s=measure_s
            ),
            rates,
            jobs=jobs,
        ),
    )


def edge_rate(sweep: SweepTarget) -> float | None:
    """The lowest offered rate whose goodput fell below HELD_SHARE of what was offered."""
    fell = [s.rate for s in sweep.steps if held.step_outcome(s) == held.FELL]
    return min(fell) if fell else None


def delay_step(target: Target, settings: StorySettings, incident_delay: float) -> DelayStep:
    entry = predict_target(target, replace(settings, incident_delay=incident_delay))
    s = entry.summary
    assert s is not None
    return DelayStep(
        incident_delay=incident_delay,
        held=held.was_held(entry),
        recovered=s.recovery_s is not None,
        recovery_s=s.recovery_s,
        visits_served_during=s.visits_served_during,
        goodput_during=s.goodput_during,
        trusted=True,
    )

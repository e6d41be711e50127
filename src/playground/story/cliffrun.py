"""The cliff's measurement (`playground story --cliff`): each target's rate sweep, then the
incident at each delay on one bring-up each; what it judges and shows is :mod:`.cliff`'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from playground.core.compose import DockerError
from playground.core.target import Target
from playground.incident import capacity
from playground.incident.settings import SweepSettings
from playground.incident.storyresults import (
    Cliff,
    CliffTarget,
    StoryTarget,
    SweepTarget,
)
from playground.story import findings
from playground.story.cliff import (
    BELOW,
    DELAYS,
    SHARES,
    below_range,
    delay_step,
    edge,
    first_delay,
    judge,
)
from playground.story.run import RunInProgress, as_run, run_incident
from playground.story.sweeprun import run_sweep_target


def _swept(
    story: RunInProgress, target: Target, shares: Sequence[float], *, capacity: float, delay: float
) -> SweepTarget:
    """The rate sweep at these shares of the predicted capacity, on one bring-up."""
    rates = [round(share * capacity, 1) for share in shares]
    return run_sweep_target(story, target, SweepSettings(rates=rates, delay=delay))


def run_cliff(
    story: RunInProgress,
    targets: Sequence[Target],
    *,
    delay: float,
    shares: Sequence[float] = SHARES,
    delays: Sequence[float] = DELAYS,
) -> None:
    """Each thread-pool target: the rate sweep on one bring-up, then the incident once per
    delay (a bring-up each); results.json after each measurement."""
    settings = story.run.story
    story.run.cliff = cliff = Cliff(delay=delay, shares=list(shares), delays=list(delays))
    for base in (t for t in targets if t.model == "threads"):
        target = as_run(base, settings)
        prediction = capacity.of(target, settings, upstream_s=delay)
        entry = CliffTarget(name=target.name, title=target.title, prediction=prediction)
        cliff.targets.append(entry)
        try:
            entry.rates = _swept(
                story, target, shares, capacity=prediction.capacity_per_s, delay=delay
            )
            if below_range(entry.rates.steps):
                story.info(f"{target.name}: even {shares[0]:.0%} fell; on below it")
                lower = _swept(
                    story, target, BELOW, capacity=prediction.capacity_per_s, delay=delay
                ).steps
                entry.rates.steps = sorted([*lower, *entry.rates.steps], key=lambda s: s.rate)
        except DockerError as exc:
            story.warn(f"{target.name} (cliff): {exc}")
            entry.error = str(exc)
        entry.edge_rate, entry.held_rate = edge(entry.rates.steps if entry.rates else [])
        story.save()
        for d in delays:
            measured = StoryTarget(name=target.name, model=target.model, server=target.server)
            story.info(f"{target.name}: the incident at {d:g} s")
            try:
                measured = run_incident(
                    story, target, measured, replace(settings, incident_delay=d)
                )
            except DockerError as exc:
                story.warn(f"{target.name} at {d:g} s: {exc}")
                measured.error = str(exc)
            measured.findings = findings.for_target(measured)
            at_d = capacity.of(target, settings, upstream_s=d)
            entry.delays.append(delay_step(d, measured, at_d.lasts_s))
            story.save()
        entry.edge_delay = first_delay(entry.delays, failed="held")
        entry.unrecovered_delay = first_delay(entry.delays, failed="recovered")
        cliff.targets[-1] = judge(entry)
        story.save()

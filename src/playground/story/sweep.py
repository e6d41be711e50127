"""Goodput against offered load (`playground story --sweep`): per target, one short step per
offered rate on one bring-up, the third party at a fixed delay, no incident.

Each step is a constant offered rate; the servers drain before it (:func:`.run.settle`). Its
first `warmup_s` seconds fill the servers and are not counted; the figures are over the
measured window after it, by the second each attempt was meant to be sent (offered, attempts)
or ended (goodput, timeouts, errors). A user's latency counts from the intended send of the
first attempt to the first success, refreshes included, for the visits that arrived in the
window; every visit is followed to its end (the generator waits for them).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from playground.compose import DockerError, shown
from playground.scenarios import Target
from playground.story import findings, plan
from playground.story.analysis import Attempt, check_adds_up, per_second, percentile, visits_from
from playground.story.run import Story, as_run, bound, brought_up, generator, read_output, settle
from playground.storymodel import (
    GeneratorCheck,
    StorySettings,
    Sweep,
    SweepSettings,
    SweepStep,
    SweepTarget,
)


def step_args(
    s: StorySettings, sweep: SweepSettings, target: Target, *, rate: float, out: str
) -> list[str]:
    """The generator's command line for one step: a constant offered rate, the third party at
    the sweep's delay throughout, the story's users (refreshes included)."""
    url = target.url(delay=sweep.delay)
    return plan.openloop(url, rate=rate, duration=sweep.step_s, options=plan.users(s), out=out)


def summarise_step(
    *,
    attempts: Sequence[Attempt],
    check: GeneratorCheck,
    rate: float,
    warmup_s: float,
    measure_s: float,
    settled_before_s: float | None = 0.0,
) -> SweepStep:
    """The figures of one step over its measured window [warmup_s, warmup_s + measure_s)."""
    end = warmup_s + measure_s
    rows = per_second(attempts, seconds=int(end) + 1)
    window = [r for r in rows if warmup_s <= r.t < end]
    n = len(window) or 1
    visits = [v for v in visits_from(attempts) if warmup_s <= v.start < end]
    latencies = [v.latency for v in visits]
    return SweepStep(
        rate=rate,
        offered_per_s=sum(r.arrivals for r in window) / n,
        attempts_per_s=sum(r.arrivals + r.refreshes for r in window) / n,
        goodput_per_s=sum(r.goodput for r in window) / n,
        timeouts=sum(r.timeouts for r in window),
        errors=sum(r.errors for r in window),
        visits=len(visits),
        visits_served=sum(v.succeeded for v in visits) / len(visits) if visits else None,
        latency_p50_s=percentile(latencies, 50),
        latency_p99_s=percentile(latencies, 99),
        check=check,
        adds_up=check_adds_up(attempts, rows),
        window_s=float(len(window)),
        settled_before_s=settled_before_s,
    )


def _named(target: Target) -> SweepTarget:
    return SweepTarget(
        name=target.name, title=target.title, model=target.model, server=target.server
    )


def run_sweep_target(story: Story, target: Target, sweep: SweepSettings) -> SweepTarget:
    """One target through every rate of the sweep, on one bring-up, the servers drained
    before each step."""
    settings, docker = story.run.story, story.docker
    entry = replace(
        _named(target),
        capacity_per_s=sweep.capacity(settings) if target.model == "threads" else None,
        commands=[shown(docker.compose(target.compose_files, "up", "-d", "--wait"))],
    )
    with brought_up(docker, target) as servers:
        for rate in sweep.rates:
            settled = settle(servers, limit=sweep.settle_s)
            out_name = f"sweep-{target.name}-{rate:g}.json"
            argv = generator(
                story,
                target,
                step_args(settings, sweep, target, rate=rate, out=f"/out/{out_name}"),
                name=f"{target.name}-sweep",
            )
            entry.commands.append(shown(argv))
            story.info(
                f"{target.name}: {rate:g} visits/s for {sweep.step_s:g} s, the third party at "
                f"{sweep.delay:g} s"
            )
            proc = docker.run(argv, check=False, timeout=bound(settings, sweep.step_s))
            output = read_output(story.raw_dir / out_name, f"{target.name} at {rate:g}/s", proc)
            step = summarise_step(
                attempts=output.attempts,
                check=output.check,
                rate=rate,
                warmup_s=sweep.warmup_s,
                measure_s=sweep.measure_s,
                settled_before_s=settled,
            )
            entry.steps.append(step)
            story.info(
                f"{target.name} at {rate:g}/s: goodput {step.goodput_per_s:.1f}/s, attempts "
                f"{step.attempts_per_s:.1f}/s, {step.timeouts} timeouts; "
                f"{'valid' if step.valid else 'INVALID'}"
            )
    return entry


def run_sweep(story: Story, targets: Sequence[Target], sweep: SweepSettings) -> None:
    """Each target through the sweep; results.json after each."""
    story.run.sweep = Sweep(settings=sweep)
    for base in targets:
        target = as_run(base, story.run.story)
        started = time.monotonic()
        try:
            entry = run_sweep_target(story, target, sweep)
        except DockerError as exc:
            story.warn(f"{target.name} (sweep): {exc}")
            entry = replace(_named(target), error=str(exc))
        entry.findings = findings.for_sweep_target(entry)
        entry.wall_s = round(time.monotonic() - started, 1)
        story.run.sweep.targets.append(entry)
        story.save()

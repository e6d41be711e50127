"""The sweep's measurement (`playground story --sweep`): each target through every rate on one
bring-up, the servers drained before each step; what it shows is :mod:`.sweep`'s."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from playground.core.compose import DockerError, shown
from playground.core.target import Target
from playground.incident.settings import SweepSettings
from playground.incident.storyresults import Sweep, SweepTarget
from playground.story import findings
from playground.story.run import (
    RunInProgress,
    as_run,
    bound,
    brought_up,
    generator,
    read_output,
    settle,
)
from playground.story.sweep import named, step_args, summarise_step


def run_sweep_target(story: RunInProgress, target: Target, sweep: SweepSettings) -> SweepTarget:
    """One target through every rate of the sweep, on one bring-up, the servers drained
    before each step."""
    settings, docker = story.run.story, story.docker
    entry = replace(
        named(target),
        capacity_per_s=sweep.capacity(settings) if target.model == "threads" else None,
        commands=[shown(docker.compose(target.compose_files, "up", "-d", "--wait"))],
    )
    with brought_up(story, target) as servers:
        for rate in sweep.rates:
            settled = settle(servers, limit=sweep.settle_s)
            out_name = f"sweep-{target.name}-{rate:g}.json"
            tool = step_args(settings, sweep, target, rate=rate, out=f"/out/{out_name}")
            argv = generator(story, target, tool, name=f"{target.name}-sweep")
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


def run_sweep(story: RunInProgress, targets: Sequence[Target], sweep: SweepSettings) -> None:
    """Each target through the sweep; results.json after each."""
    story.run.sweep = Sweep(settings=sweep)
    for base in targets:
        target = as_run(base, story.run.story)
        started = time.monotonic()
        try:
            entry = run_sweep_target(story, target, sweep)
        except DockerError as exc:
            story.warn(f"{target.name} (sweep): {exc}")
            entry = replace(named(target), error=str(exc))
        entry.findings = findings.for_sweep_target(entry)
        entry.wall_s = round(time.monotonic() - started, 1)
        story.run.sweep.targets.append(entry)
        story.save()

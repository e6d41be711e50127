"""Round after round on the stack: every target on a freshly deployed stack per repeat, each
measurement read into the story's figures and kept (results.json after each).

The figures and the verdict are the story's: the command hands them in (`Reading`), so this
package measures on Swarm without importing another kind's."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from playground.core.compose import DockerError
from playground.core.runstore import RunStore
from playground.core.target import Target
from playground.incident.analysis import GeneratorOutput, generator_output
from playground.incident.storyresults import StoryRun, StoryTarget, TargetSpread
from playground.swarm.engine import SwarmRun
from playground.swarm.live import Stage, deploy_command, measure, pushed_stack, staged
from playground.swarm.senderjobs import on_its_engine, sender_jobs
from playground.swarm.stack import Stack


@dataclass(frozen=True)
class Reading:
    """How a measurement on the stack becomes the story's: its figures and findings from the
    senders' merged records, and the spread of a target's repeats."""

    figures: Callable[[StoryTarget, GeneratorOutput], StoryTarget]
    spreads: Callable[[Sequence[StoryTarget]], list[TargetSpread]]


def measure_all(
    base: SwarmRun,
    run: StoryRun,
    store: RunStore[StoryRun],
    targets: list[Target],
    *,
    reading: Reading,
    warn: Callable[[str], None],
) -> None:
    """Round after round, every target on a freshly deployed stack; results.json after each."""
    with staged(base) as stage:
        stacks: dict[str, Stack] = {}
        for target in targets:
            folder = base.run_dir / target.name
            folder.mkdir(parents=True, exist_ok=True)
            stacks[target.name] = pushed_stack(replace(base, run_dir=folder), stage, target=target)
        for repeat in range(1, run.repeat + 1):
            for target in targets:
                entry = one(
                    base, stage, stacks[target.name], target=target, repeat=repeat, reading=reading
                )
                if entry.error:
                    warn(f"{target.name}: {entry.error}")
                run.targets.append(entry)
                store.save_run(run)
            if run.repeat > 1:
                run.spreads = reading.spreads(run.targets)


def one(
    base: SwarmRun, stage: Stage, stack: Stack, *, target: Target, repeat: int, reading: Reading
) -> StoryTarget:
    """One measurement: the stack deployed, the senders' records merged and read as the
    story's figures, its findings decided; a failure is recorded in the target."""
    folder = base.run_dir / target.name / f"repeat-{repeat}"
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    entry = StoryTarget.about(target, repeat)
    stack_file = base.run_dir / target.name / "stack.json"
    shown = Path("raw") / target.name / "stack.json"
    entry.commands = [shlex.join(deploy_command(shown))]
    try:
        measured = measure(
            replace(base, run_dir=folder), stage, stack, target=target, stack_file=stack_file
        )
        # The stack's shape first: a node lost under the repeat withholds its verdict.
        entry.swarm = replace(measured.shape, stack_file=str(shown))
        app_on = entry.swarm.placement.get(stack.app, [])
        senders = sender_jobs(base, target=target, image=stage.sender, app_on=app_on)
        entry.commands += [shlex.join(on_its_engine(job, job.argv)) for job in senders]
        entry = reading.figures(entry, generator_output(measured.merged.result))
    except DockerError as exc:
        entry.error = str(exc)
    entry.wall_s = round(time.monotonic() - started, 1)
    return entry

"""A `playground story` run's start and end, measured by the playground or by URL: the new run
with its environment, and what is printed when it ends (each target's verdict, or with repeats
how often each verdict came out, k of n; where the results are; and the exit status: 1 when a
target was not measured or not trusted)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console

from playground.commands import options
from playground.core import environment, runstore
from playground.core.compose import Docker
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryRun
from playground.story import cells, findings, repeats


def new_story_run(
    args: argparse.Namespace, docker: Docker, settings: StorySettings, *, repeat: int = 1
) -> StoryRun:
    return StoryRun(
        run_id=runstore.new_run_id() + "-story",
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        command=args.command_line,
        environment=environment.collect(
            root=options.ROOT,
            docker=docker,
            tool="openloop",
            tool_version=None,
            images=environment.STORY_IMAGES,
        ),
        story=settings,
        repeat=repeat,
        settle=getattr(args, "settle", None),
    )


def print_outcome(
    run: StoryRun, *, results: Path, paths: list[Path], out: Console, err: Console
) -> int:
    if run.repeat > 1:
        for sp in repeats.spreads(run.targets, after_s=run.story.after_s):
            out.print(f"{sp.name}: {cells.odds(sp)}", highlight=False)
    else:
        for t in run.targets:
            out.print(f"{t.name}: {cells.once(t)}", highlight=False)
    out.print(f"results: {results}")
    for path in paths[:2]:
        out.print(f"         {path}")
    if bad := findings.failed(run):
        err.print(f"[red]not measured or not trusted: {', '.join(bad)}[/red]", highlight=False)
        return 1
    return 0

"""What `playground story` prints when a run ends, measured by the playground or by URL: each
target's verdict, where the results are, and the exit status (1 when a target was not measured
or not trusted)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from playground.story import cells, findings
from playground.storymodel import StoryRun


def print_outcome(
    run: StoryRun, *, results: Path, paths: list[Path], out: Console, err: Console
) -> int:
    for t in run.targets:
        out.print(f"{t.name}: {cells.verdict(t)}")
    out.print(f"results: {results}")
    for path in paths[:2]:
        out.print(f"         {path}")
    if bad := findings.failed(run):
        err.print(f"[red]not measured or not trusted: {', '.join(bad)}[/red]", highlight=False)
        return 1
    return 0

"""Commands on finished runs, of every kind: `playground runs`, `compare` and `report`."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from playground.commands import kinds, options, record
from playground.core import records
from playground.core.results import Run
from playground.core.runstore import ResultsError
from playground.incident.storyresults import StoryRun
from playground.report.benchcompare import compare_table
from playground.story import byhand
from playground.story import compare as story_compare


def add_parser(sub: Any) -> None:
    listing = sub.add_parser(
        "runs", help="list the runs kept in results/", parents=[options.results_dir()]
    )
    listing.set_defaults(handler=cmd_runs)

    compare = sub.add_parser(
        "compare",
        help="compare two runs of the same kind side by side",
        parents=[options.results_dir()],
    )
    compare.add_argument("run_a")
    compare.add_argument("run_b")
    compare.set_defaults(handler=cmd_compare)

    rep = sub.add_parser(
        "report",
        help="write a run's report again from its results.json",
        parents=[options.results_dir()],
    )
    rep.add_argument(
        "run",
        nargs="?",
        default="latest",
        help="a run id, `latest`, or a by-hand generator's output (docs/your-service.md), "
        "which is kept as a new story run first",
    )
    rep.add_argument("--name", help="the by-hand run's target name (default: the file's stem)")
    rep.add_argument(
        "--record",
        action="store_true",
        help="show the run's committed record (docs/runs/<run id>.json, any kind) instead",
    )
    rep.set_defaults(handler=cmd_report)


def _load(args: argparse.Namespace, ref: str) -> Any:
    return kinds.load_run(kinds.resolve_run(args.results_dir, ref))


def cmd_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    table = Table(title=f"runs in {args.results_dir}")
    for col in ("run", "kind", "started", "targets", "state", "command"):
        table.add_column(col, overflow="fold")
    for path, found in kinds.runs(args.results_dir):
        if isinstance(found, ResultsError):
            table.add_row(path.name, "?", "-", "-", f"unreadable: {found}", "-")
            continue
        kind, run = found
        state = "unfinished" if run.finished_at is None else kind.state(run)
        table.add_row(
            path.name,
            kind.name,
            run.started_at or "-",
            str(kind.count(run)),
            state,
            run.command or "-",
        )
    out.print(table)
    return 0


def cmd_compare(args: argparse.Namespace, out: Console, err: Console) -> int:
    a, b = _load(args, args.run_a), _load(args, args.run_b)
    if isinstance(a, StoryRun) and isinstance(b, StoryRun):
        table = Table(title=f"story {a.run_id} (A) against {b.run_id} (B)")
        for col in story_compare.COMPARE_COLUMNS:
            table.add_column(col, overflow="fold")
        for row in story_compare.compare_rows(a, b):
            table.add_row(*row)
        out.print(table)
        for line in story_compare.settings_differ(a, b):
            out.print(line)
        return 0
    if isinstance(a, Run) and isinstance(b, Run):
        out.print(compare_table(a=a, b=b))
        return 0
    raise ResultsError(
        f"{args.run_a} and {args.run_b} are runs of different kinds: compare a story with a "
        "story, a bench run with a bench run"
    )


def cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.record:
        path = kinds.record_path(args.run, records.RECORDS_DIR)
        record.show(kinds.load_record(path), out)
        return 0
    run_dir = kinds.resolve_run(args.results_dir, args.run)
    if byhand.is_generator_output(run_dir):
        run_dir = byhand.keep(
            run_dir,
            results_dir=args.results_dir,
            name=args.name or run_dir.stem,
            command=args.command_line,
        )
        out.print(f"kept as run {run_dir.name}")
    elif run_dir.is_file():  # a run named by its results.json: its report goes beside it
        run_dir = run_dir.parent
    kind, run = kinds.load(run_dir)
    for path in kind.write_report(run_dir, run):
        out.print(str(path))
    return 0

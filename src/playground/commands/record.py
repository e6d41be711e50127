"""`playground record`: a stored story run as the compact record the pages cite
(docs/runs/<run id>.json), and `--show` to read a record back as a table."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from playground.commands import kinds
from playground.commands.options import Subparsers
from playground.incident import runrecords
from playground.incident.runrecords import RecordError, RunRecord
from playground.incident.storyresults import StoryRun


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "record",
        help="write a story run's compact record (docs/runs/<run id>.json) from its results, "
        "or show a record (--show)",
    )
    p.add_argument("source", help="a story run's folder or runstore.json; with --show, a record")
    p.add_argument(
        "--out",
        type=Path,
        default=runrecords.RECORDS_DIR,
        help="where to write the record (default docs/runs)",
    )
    p.add_argument(
        "--machine",
        help="the machine in a few words (default: its CPUs and Docker's version, as recorded)",
    )
    p.add_argument("--show", action="store_true", help="print the record SOURCE as a table")
    p.set_defaults(handler=cmd_record)


def cmd_record(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.show:
        show(runrecords.load(Path(args.source)), out)
        return 0
    run = kinds.load_run(Path(args.source))
    if not isinstance(run, StoryRun):
        raise RecordError(f"{args.source}: not a story run; a record holds a story run")
    record = runrecords.from_run(
        run, machine=args.machine or runrecords.machine_of(run.environment)
    )
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{record.run_id}.json"
    path.write_text(runrecords.dumps(record))
    out.print(f"wrote {path} ({len(record.targets)} targets)")
    return 0


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def _num(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:g}{unit}"


def show(record: RunRecord, out: Console) -> None:
    """The record as its header lines and a table of targets."""
    out.print(f"run {record.run_id} ({record.kind}, {record.source})")
    for label, value in (
        ("command", record.command),
        ("date", record.date),
        ("machine", record.machine),
        ("settings", ", ".join(f"{k} {v}" for k, v in sorted(record.settings.items())) or None),
    ):
        out.print(f"{label}: {value or '-'}")
    table = Table()
    for col in (
        "target",
        "repeat",
        "verdict",
        "served during",
        "goodput/s before → during → after",
        "time to recover",
        "attempts/visit",
        "send lag p99 / max",
        "valid",
    ):
        table.add_column(col, overflow="fold")
    for t in record.targets:
        lag = (
            "-"
            if t.send_lag_p99_s is None
            else f"{1000 * t.send_lag_p99_s:.1f} / {1000 * (t.send_lag_max_s or 0):.1f} ms"
        )
        table.add_row(
            t.name,
            str(t.repeat),
            t.verdict or "-",
            _pct(t.visits_served_during),
            " → ".join(_num(g) for g in (t.goodput_before, t.goodput_during, t.goodput_after)),
            _num(t.recovery_s, " s"),
            _num(t.attempts_per_visit),
            lag,
            {True: "yes", False: "no", None: "-"}[t.valid],
        )
    out.print(table)

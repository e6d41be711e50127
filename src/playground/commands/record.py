"""`playground record`: a stored run of any kind as the compact record the pages cite
(docs/runs/<run id>.json), and `--show` to read a record back as tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from playground.commands import kinds
from playground.commands.options import Subparsers
from playground.core import records
from playground.core.records import RecordHeader


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "record",
        help="write a run's compact record (docs/runs/<run id>.json) from its results, "
        "whatever its kind, or show a record (--show)",
    )
    p.add_argument(
        "source",
        help="a run's folder or results file; with --show, a record's file or its run id",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=records.RECORDS_DIR,
        help="where to write the record, or where --show finds a run id (default docs/runs)",
    )
    p.add_argument(
        "--machine",
        help="the machine in a few words (default: its CPUs and Docker's version, as recorded)",
    )
    p.add_argument("--show", action="store_true", help="print the record SOURCE as tables")
    p.set_defaults(handler=cmd_record)


def cmd_record(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.show:
        show(kinds.load_record(kinds.record_path(args.source, args.out)), out)
        return 0
    kind, run = kinds.load(Path(args.source))
    machine = args.machine or records.machine_of(run.environment)
    record = kind.record(run, machine=machine)
    path = records.write(record, args.out)
    rows = sum(len(cells) for _, _, cells in record.tables())
    out.print(f"wrote {path} ({record.kind}, {rows} rows)")
    return 0


def show(record: RecordHeader, out: Console) -> None:
    """The record as its header lines and a table per list of rows."""
    out.print(f"run {record.run_id} ({record.kind}, {record.source})")
    env = record.environment
    tools = None
    if env is not None:
        versions = [
            ("Docker", env.docker_version),
            ("Compose", env.compose_version),
            ("Python", env.python),
            (env.load_tool or "load tool", env.load_tool_version),
        ]
        tools = ", ".join(f"{name} {v}" for name, v in versions if v) or None
    for label, value in (
        ("command", record.command),
        ("date", record.date),
        ("machine", record.machine),
        ("versions", tools),
        (
            "settings",
            records.cell(dict(sorted(record.settings.items()))) if record.settings else None,
        ),
    ):
        out.print(f"{label}: {value or '-'}")
    for name, columns, cells in record.tables():
        if len(columns) <= WIDE:
            _table(out, name, columns, cells)
            continue
        # Many figures a row: one column per row, a line per figure, a few rows at a time.
        per = max(1, (out.width - 24) // 24)
        for start in range(0, len(cells), per):
            part = cells[start : start + per]
            heads = [f"{row[0]} ({start + i + 1})" for i, row in enumerate(part)]
            lines = [[col, *(row[j] for row in part)] for j, col in enumerate(columns)]
            _table(out, name, ["", *heads], lines)


#: A table with more columns than this is printed one column per row.
WIDE = 10


def _table(out: Console, title: str, columns: list[str], cells: list[list[str]]) -> None:
    if not cells:
        return
    table = Table(title=title)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in cells:
        table.add_row(*row)
    out.print(table)

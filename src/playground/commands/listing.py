"""`playground list`: every target the runner knows, with its default load."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from playground.commands.options import Subparsers
from playground.core.scenarios import REGISTRY


def add_parser(sub: Subparsers) -> None:
    listing = sub.add_parser(
        "list", help="list the scenarios, demos and contenders and their default loads"
    )
    listing.set_defaults(handler=cmd_list)


def cmd_list(args: argparse.Namespace, out: Console, err: Console) -> int:
    table = Table(title="scenarios")
    for col in ("name", "kind", "compose file", "service", "host URL", "n", "c", "tutorial rps"):
        table.add_column(col, overflow="fold")
    for t in REGISTRY.values():
        table.add_row(
            t.name,
            t.kind,
            t.compose_file,
            f"{t.service}:{t.port}",
            t.host_url(delay=t.delay) or "-",
            str(t.requests),
            str(t.concurrency),
            "-" if t.tutorial_rps is None else f"{t.tutorial_rps:g}",
        )
    out.print(table)
    return 0

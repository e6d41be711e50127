"""The end-of-run tables for the terminal (rich). Text, never markup, so results cannot inject
styles."""

from __future__ import annotations

from rich.table import Table as RichTable
from rich.text import Text

from playground.core.results import Entry, Run
from playground.report.reading import (
    efficiency,
    fmt,
    fmt_pct,
    fmt_spread,
    fmt_threads,
    spread_cell,
    status,
    steady_cell,
    title,
)
from playground.report.sections import DEMO_HEADERS, demo_cells, demos


def valid_text(entry: Entry) -> Text:
    state, reasons = status(entry)
    if state == "ok":
        return Text("yes", style="green")
    return Text.assemble(("INVALID" if state == "invalid" else "ERROR", "bold red"), f": {reasons}")


def demo_table(*, results: Run) -> RichTable | None:
    """The companion demos, published beside ours; None when the run has none."""
    entries = demos(results)
    if not entries:
        return None
    table = RichTable(title="Companion demos: published vs ours")
    for header in DEMO_HEADERS:
        table.add_column(header, justify="right" if header == "at once" else "left")
    for entry in entries:
        cells = demo_cells(entry)
        shape = Text(
            cells[-1],
            style={"serialised": "bold red", "concurrent": "green"}.get(cells[-1], "yellow"),
        )
        table.add_row(*(Text(c) for c in cells[:-1]), shape)
    return table


def summary_table(*, results: Run) -> RichTable:
    """The figures that decide whether a scenario kept up."""
    run = results
    table = RichTable(title=title(run), show_lines=False)
    if not run.finished_at:
        table.caption = "incomplete run: finished_at is null"
    headers = (
        "scenario",
        "c",
        "steady rps",
        "ideal",
        "efficiency",
        "ab rps / cap",
        "spread",
        "p99 ms",
        "threads before→peak",
        "valid",
    )
    for header in headers:
        table.add_column(header, justify="left" if header in ("scenario", "valid") else "right")
    for entry in run.entries():
        table.add_row(
            Text(entry.name, style="bold" if entry.kind == "calibration" else ""),
            Text(fmt(entry.concurrency)),
            Text(steady_cell(entry)),
            Text(fmt(entry.ideal_rps)),
            Text(fmt_pct(efficiency(entry))),
            Text(f"{fmt_spread(entry, 'rps')} / {fmt(entry.ab_cap_rps)}"),
            Text(spread_cell(entry)),
            Text(fmt(entry.latency_ms.get("p99"), digits=0)),
            Text(fmt_threads(entry)),
            valid_text(entry),
        )
    return table

"""Two runs side by side, keyed by (scenario, concurrency), as Markdown and for the terminal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table as RichTable
from rich.text import Text

from playground.core.notation import EM_DASH
from playground.core.results import Entry, Run
from playground.report.document import (
    Block,
    Callout,
    Heading,
    Inline,
    Paragraph,
    Span,
    Table,
    render_markdown,
)
from playground.report.reading import flatten, fmt, fmt_delta, keys_of, status

COMPARE_HEADERS = (
    "scenario",
    "c",
    "steady rps A",
    "steady rps B",
    "Δ steady",
    "ab rps A",
    "ab rps B",
    "threads peak A",
    "threads peak B",
    "valid A",
    "valid B",
)


@dataclass(frozen=True)
class Row:
    """One (name, concurrency) key with its entry in each run (None where absent)."""

    name: str
    concurrency: int
    a: Entry | None
    b: Entry | None


def rows(a: Run, b: Run) -> list[Row]:
    """A's order first, then entries only B has."""
    in_a = {e.key: e for e in reversed(a.entries())}
    in_b = {e.key: e for e in reversed(b.entries())}
    keys = list(dict.fromkeys([*(e.key for e in a.entries()), *(e.key for e in b.entries())]))
    return [Row(name, c, in_a.get((name, c)), in_b.get((name, c))) for name, c in keys]


def cells(row: Row) -> list[str]:
    def figure(entry: Entry | None, key: str) -> str:
        return "missing" if entry is None else fmt(getattr(entry, key))

    return [
        row.name,
        fmt(row.concurrency),
        figure(row.a, "steady_rps"),
        figure(row.b, "steady_rps"),
        fmt_delta(row.a.steady_rps if row.a else None, row.b.steady_rps if row.b else None),
        figure(row.a, "rps"),
        figure(row.b, "rps"),
        figure(row.a, "threads_peak"),
        figure(row.b, "threads_peak"),
    ]


def valid_short(entry: Entry | None, side: str) -> str:
    if entry is None:
        return f"missing in {side}"
    return {"ok": "yes", "invalid": "INVALID", "error": "ERROR"}[status(entry)[0]]


def diff_line(label: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    """Which (flattened) keys differ between two mappings, with both values, truncated."""
    flat_a, flat_b = flatten(a), flatten(b)
    keys = sorted(set(flat_a) | set(flat_b))

    def short(value: str | None) -> str:
        text = "(absent)" if value is None else (value or EM_DASH)
        return text if len(text) <= 40 else text[:39] + "…"

    differ = [k for k in keys if flat_a.get(k) != flat_b.get(k)]
    if not differ:
        return f"{label}: identical ({len(keys)} keys)."
    parts = [f"{k} ({short(flat_a.get(k))} → {short(flat_b.get(k))})" for k in differ]
    return f"{label}: {len(differ)} of {len(keys)} keys differ: " + "; ".join(parts) + "."


def compare(*, a: Run, b: Run) -> str:
    """Markdown comparing two runs. Δ steady is (B − A) / A; an entry present in only one run
    says "missing in A/B" so a scenario that vanished is not mistaken for one that stood still."""
    table: list[list[Inline]] = [
        [*cells(r), valid_short(r.a, "A"), valid_short(r.b, "B")] for r in rows(a, b)
    ]
    blocks: list[Block] = [
        Heading(2, f"Comparison: A = run {a.run_id or '?'}, B = run {b.run_id or '?'}")
    ]
    for label, run in (("A", a), ("B", b)):
        if not run.finished_at:
            blocks.append(
                Callout([Span(f"Run {label} is incomplete", bold=True), " (finished_at is null)."])
            )
    blocks.append(
        Table(COMPARE_HEADERS, table) if table else Paragraph("Neither run has any entry.")
    )
    blocks.append(
        Paragraph(diff_line("Environment", keys_of(a.environment), keys_of(b.environment)))
    )
    blocks.append(Paragraph(diff_line("Settings", keys_of(a.settings), keys_of(b.settings))))
    return render_markdown(blocks)


def compare_table(*, a: Run, b: Run) -> RichTable:
    """The same comparison as :func:`compare`, for the terminal."""
    table = RichTable(title=f"A = run {a.run_id or '?'}  vs  B = run {b.run_id or '?'}")
    for header in COMPARE_HEADERS:
        table.add_column(
            header, justify="left" if header in ("scenario", "valid A", "valid B") else "right"
        )
    for row in rows(a, b):
        text = cells(row)
        delta = Text(
            text[4],
            style="green" if text[4].startswith("+") else "red" if text[4].startswith("-") else "",
        )
        styles = {"yes": "green", "INVALID": "bold red", "ERROR": "bold red"}
        va, vb = valid_short(row.a, "A"), valid_short(row.b, "B")
        table.add_row(
            *(Text(c) for c in text[:4]),
            delta,
            *(Text(c) for c in text[5:]),
            Text(va, style=styles.get(va, "yellow")),
            Text(vb, style=styles.get(vb, "yellow")),
        )
    table.caption = diff_line("Environment", keys_of(a.environment), keys_of(b.environment))
    return table

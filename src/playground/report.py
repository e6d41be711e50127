"""Turn a run's ``results.json`` into a Markdown + HTML report, PNG charts and terminal tables.

The report has to stand on its own: someone who was not at the terminal must be able to see what was
measured, why a figure misses its target, and how to reproduce it. So every table cell tolerates
missing data (a run can be interrupted, a scenario can fail to start), everything copied from the
results is escaped, and the output is deterministic so two reports of the same results are
byte-identical.

Both documents are built from one small block model (:class:`Heading`, :class:`Table`, ...) and then
rendered twice, so the Markdown and the HTML can never disagree on content.

Chart choices
-------------
* ``rps.png`` and ``threads.png`` show one bar group per scenario *name*, using the entry at the
  run's main concurrency (``settings.concurrency``) and, where that is null or missing for a name
  (a sweep, or a demo run at its own c), the entry at the highest concurrency measured for it. The
  title names the concurrency most bars share; a bar at another one says so in its label. The full
  sweep is shown by ``sweep_*.png`` instead.
* The calibration entry is drawn as the "harness ceiling" line, not as a bar.
* A chart with nothing to plot is not written (and not linked); :func:`write_report` returns exactly
  the files it wrote.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator
from rich.table import Table as RichTable
from rich.text import Text

__all__ = ["compare", "compare_table", "demo_shape", "demo_table", "summary_table",
           "write_report"]

#: Shown wherever a figure is unknown (null, missing, or not a number).
DASH = "—"
#: An entry below this share of its ideal throughput "missed its target" and gets a "Why" line.
TARGET_EFFICIENCY = 0.9
#: Thresholds for the report's own diagnoses (used only when the runner's notes do not cover them).
CPU_BOUND_PCT = 90.0
SYN_RETRANSMIT_MS = 1000.0

CHART_DPI = 100
#: PNG metadata that would otherwise embed the matplotlib version; dropping it keeps files reproducible.
PNG_METADATA: dict[str, str | None] = {"Software": None}

HOW_TO_READ = (
    "ab's own figure (ab rps) is capped at n / ((n/c + 1) · delay): ab sends its first request alone "
    "and only opens the other c connections once it is answered, so a whole extra delay is added to "
    "a run that ideally lasts n/c · delay; the \"ab cap\" column is that ceiling. Steady rps is "
    "c / mean latency over every request but that first one, i.e. the throughput the server sustains "
    "once all c connections are busy. Ideal = c / delay: every request waits exactly the upstream "
    "delay and nothing else. Efficiency = steady / ideal. The calibration row is the same load aimed "
    "at the slow upstream alone; its steady rps is the harness ceiling no scenario can beat."
)


# --------------------------------------------------------------------------------------------------
# Reading results defensively
# --------------------------------------------------------------------------------------------------


def _num(value: object) -> float | None:
    """Return a finite number or None, so a null, a string or a NaN never reaches arithmetic."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _dict(value: object) -> dict[str, Any]:
    """Return ``value`` if it is a dict, else an empty one: results may be partial or hand-edited."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    """Return ``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    """Render a scalar from the results as one line of text (None -> empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return " ".join(str(value).split()) if isinstance(value, str) else str(value)


def _calibration(results: dict[str, Any]) -> dict[str, Any] | None:
    """The calibration entry, if the run has one."""
    calibration = results.get("calibration")
    return calibration if isinstance(calibration, dict) else None


def _scenarios(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario entries (kinds "scenario" and "demo"), skipping anything that is not an entry."""
    return [e for e in _list(results.get("scenarios")) if isinstance(e, dict)]


def _all_entries(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Calibration first (it is the reference every other row is read against), then the scenarios."""
    calibration = _calibration(results)
    return ([calibration] if calibration else []) + _scenarios(results)


def _name(entry: dict[str, Any]) -> str:
    """An entry's name; unnamed entries still get a printable label."""
    return _str(entry.get("name")) or "(unnamed)"


def _concurrency(entry: dict[str, Any]) -> int | None:
    """The entry's concurrency as an int (it is the x axis of sweeps and half of the compare key)."""
    c = _num(entry.get("concurrency"))
    return int(c) if c is not None else None


def _efficiency(entry: dict[str, Any]) -> float | None:
    """The runner's efficiency, or steady/ideal when only the inputs were recorded."""
    efficiency = _num(entry.get("efficiency"))
    if efficiency is not None:
        return efficiency
    steady, ideal = _num(entry.get("steady_rps")), _num(entry.get("ideal_rps"))
    return steady / ideal if steady is not None and ideal else None


def _is_incomplete(results: dict[str, Any]) -> bool:
    """A run whose ``finished_at`` is null was interrupted or is still going."""
    return not results.get("finished_at")


def _is_sweep(results: dict[str, Any]) -> bool:
    """A sweep was requested, or some scenario was measured at more than one concurrency."""
    if _list(_dict(results.get("settings")).get("sweep")):
        return True
    seen: dict[str, set[int | None]] = {}
    for entry in _scenarios(results):
        seen.setdefault(_name(entry), set()).add(_concurrency(entry))
    return any(len(cs) > 1 for cs in seen.values())


def _main_entries(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per scenario name for the per-scenario charts (see the module docstring)."""
    main_c = _num(_dict(results.get("settings")).get("concurrency"))
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in _scenarios(results):
        by_name.setdefault(_name(entry), []).append(entry)
    chosen = []
    for entries in by_name.values():
        at_main = [e for e in entries if main_c is not None and _concurrency(e) == int(main_c)]
        if at_main:
            chosen.append(at_main[0])
        else:
            chosen.append(max(entries, key=lambda e: _concurrency(e) or -1))
    return chosen


def _status(entry: dict[str, Any]) -> tuple[str, str]:
    """Classify an entry as ok / invalid / error / unknown, with the reasons to show next to it."""
    error = _str(entry.get("error"))
    reasons = [_str(r) for r in _list(entry.get("invalid_reasons")) if _str(r)]
    if error:
        return "error", "; ".join([error, *reasons])
    if entry.get("valid") is False or reasons:
        return "invalid", "; ".join(reasons) or "no reason recorded"
    if entry.get("valid") is True:
        return "ok", ""
    return "unknown", ""


def _flatten(mapping: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten nested dicts (images, packages) to dotted keys so every key gets its own line."""
    flat: dict[str, str] = {}
    for key, value in mapping.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{dotted}."))
        elif isinstance(value, list):
            flat[dotted] = ", ".join(_str(v) for v in value)
        elif isinstance(value, dict):
            flat[dotted] = ""
        else:
            flat[dotted] = _str(value)
    return flat


# --------------------------------------------------------------------------------------------------
# Formatting figures
# --------------------------------------------------------------------------------------------------


def _fmt(value: object, *, digits: int = 1) -> str:
    """Format a number compactly (ints stay ints); unknown values become a dash, never "None"."""
    number = _num(value)
    if number is None:
        return DASH
    if number.is_integer() and not isinstance(value, float):
        return str(int(number))
    return f"{number:.{digits}f}"


def _fmt_pct(fraction: float | None) -> str:
    """Format a 0..1 fraction as a percentage."""
    return DASH if fraction is None else f"{fraction * 100:.1f}%"


def _fmt_spread(entry: dict[str, Any], key: str) -> str:
    """"median (min–max)" over repeats when there was more than one, else just the figure."""
    median = _fmt(entry.get(key))
    repeats = [r for r in _list(entry.get("repeats")) if isinstance(r, dict)]
    if len(repeats) < 2:
        return median
    spread = _list(_dict(entry.get("spread")).get(key))
    low, high = (_num(spread[0]), _num(spread[1])) if len(spread) == 2 else (None, None)
    if low is None or high is None:
        values = [v for v in (_num(r.get(key)) for r in repeats) if v is not None]
        if not values:
            return median
        low, high = min(values), max(values)
    return f"{median} ({_fmt(low)}–{_fmt(high)})"


def _fmt_threads(entry: dict[str, Any]) -> str:
    """"before → peak": the growth is the point of the playground (threads spawned under load)."""
    return f"{_fmt(entry.get('threads_before'))} → {_fmt(entry.get('threads_peak'))}"


def _fmt_latency(entry: dict[str, Any]) -> str:
    """p50 / p99 / max in one cell, to keep a very wide table readable."""
    latency = _dict(entry.get("latency_ms"))
    return " / ".join(_fmt(latency.get(k), digits=0) for k in ("p50", "p99", "max"))


def _fmt_delta(a: float | None, b: float | None) -> str:
    """Relative change from A to B; n/a when either side is unknown or A is zero."""
    if a is None or b is None or a == 0:
        return "n/a"
    return f"{(b - a) / a * 100:+.1f}%"


def _ceiling_for(entry: dict[str, Any], calibration: dict[str, Any] | None) -> float | None:
    """The calibration ceiling applies only to entries loaded the same way (same c and delay)."""
    if calibration is None:
        return None
    for key in ("concurrency", "delay"):
        mine, theirs = _num(entry.get(key)), _num(calibration.get(key))
        if mine is not None and theirs is not None and mine != theirs:
            return None
    return _num(calibration.get("steady_rps"))


# --------------------------------------------------------------------------------------------------
# Document model shared by the Markdown and HTML renderers
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """A run of inline text; ``bold``/``code`` are the only markup the report needs."""

    text: str
    bold: bool = False
    code: bool = False


Inline = str | Span | Sequence[str | Span]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    content: Inline


@dataclass(frozen=True)
class Callout:
    """A highlighted warning (incomplete run), so it cannot be missed in either format."""

    content: Inline


@dataclass(frozen=True)
class BulletList:
    items: Sequence[Inline]


@dataclass(frozen=True)
class CodeBlock:
    text: str


@dataclass(frozen=True)
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[Inline]]
    #: Per-row CSS class ("invalid", "error", "calibration" or ""), used by the HTML renderer only.
    row_classes: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class Image:
    file_name: str
    alt: str


Block = Heading | Paragraph | Callout | BulletList | CodeBlock | Table | Image


def _spans(content: Inline) -> list[Span]:
    """Normalise inline content to a list of spans; newlines collapse so tables stay one line."""
    items = [content] if isinstance(content, str | Span) else list(content)
    spans = []
    for item in items:
        span = Span(item) if isinstance(item, str) else item
        spans.append(Span(" ".join(span.text.split("\n")), span.bold, span.code))
    return spans


# ---- Markdown ------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|])")
_MD_LONE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _md_escape(text: str) -> str:
    """Escape what Markdown would interpret; intraword underscores (flask_app) stay readable."""
    return _MD_LONE_UNDERSCORE.sub(r"\\_", _MD_SPECIAL.sub(r"\\\1", text))


def _md_code(text: str) -> str:
    """A code span whose fence is longer than any backtick run inside it."""
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    # A pipe would still split a table cell even inside a code span (GFM), so escape it there too.
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def _md_inline(content: Inline) -> str:
    """Render inline content to Markdown."""
    out = []
    for span in _spans(content):
        if not span.text:
            continue
        text = _md_code(span.text) if span.code else _md_escape(span.text)
        out.append(f"**{text}**" if span.bold else text)
    return "".join(out)


def _md_block(block: Block) -> str:
    """Render one block to Markdown."""
    match block:
        case Heading(level=level, text=text):
            return f"{'#' * level} {_md_escape(text)}"
        case Paragraph(content=content):
            return _md_inline(content)
        case Callout(content=content):
            return f"> {_md_inline(content)}"
        case BulletList(items=items):
            return "\n".join(f"- {_md_inline(item)}" for item in items)
        case CodeBlock(text=text):
            fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
            return f"{fence}\n{text}\n{fence}"
        case Table(headers=headers, rows=rows):
            lines = ["| " + " | ".join(_md_escape(h) for h in headers) + " |"]
            lines.append("|" + "|".join("---" for _ in headers) + "|")
            lines += ["| " + " | ".join(_md_inline(c) or " " for c in row) + " |" for row in rows]
            return "\n".join(lines)
        case Image(file_name=file_name, alt=alt):
            return f"![{_md_escape(alt)}]({file_name})"
    raise TypeError(f"unknown block {block!r}")


def _render_markdown(blocks: Iterable[Block]) -> str:
    """Blocks separated by blank lines, ending with a newline."""
    return "\n\n".join(_md_block(b) for b in blocks) + "\n"


# ---- HTML ----------------------------------------------------------------------------------------

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto;
       max-width: 1400px; padding: 0 1rem; color: #1f2328; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; margin-top: 2rem; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; white-space: nowrap; }
tr.calibration td { background: #eef6ff; }
tr.invalid td { background: #fdecea; }
tr.error td { background: #fff4e5; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
pre { background: #f6f8fa; padding: .75rem; overflow-x: auto; white-space: pre-wrap; }
.callout { border-left: 4px solid #d4a72c; background: #fff8c5; padding: .5rem 1rem; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { font-size: .85rem; color: #59636e; }
""".strip()


def _html_inline(content: Inline) -> str:
    """Render inline content to HTML, escaping every character that came from the results."""
    out = []
    for span in _spans(content):
        text = html.escape(span.text)
        text = f"<code>{text}</code>" if span.code else text
        out.append(f"<strong>{text}</strong>" if span.bold else text)
    return "".join(out)


def _html_block(block: Block, images: dict[str, bytes]) -> str:
    """Render one block to HTML; images become data URIs so the file is self-contained."""
    match block:
        case Heading(level=level, text=text):
            return f"<h{level}>{html.escape(text)}</h{level}>"
        case Paragraph(content=content):
            return f"<p>{_html_inline(content)}</p>"
        case Callout(content=content):
            return f'<div class="callout">{_html_inline(content)}</div>'
        case BulletList(items=items):
            return "<ul>\n" + "\n".join(f"<li>{_html_inline(i)}</li>" for i in items) + "\n</ul>"
        case CodeBlock(text=text):
            return f"<pre><code>{html.escape(text)}</code></pre>"
        case Table(headers=headers, rows=rows, row_classes=row_classes):
            head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
            body = []
            for i, row in enumerate(rows):
                css = row_classes[i] if i < len(row_classes) and row_classes[i] else ""
                attr = f' class="{html.escape(css)}"' if css else ""
                cells = "".join(f"<td>{_html_inline(c)}</td>" for c in row)
                body.append(f"<tr{attr}>{cells}</tr>")
            return (
                f'<div class="table-wrap"><table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
                + "\n".join(body)
                + "\n</tbody>\n</table></div>"
            )
        case Image(file_name=file_name, alt=alt):
            data = base64.b64encode(images.get(file_name, b"")).decode("ascii")
            return (
                f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(file_name)}</figcaption></figure>"
            )
    raise TypeError(f"unknown block {block!r}")


def _render_html(blocks: Sequence[Block], *, title: str, images: dict[str, bytes]) -> str:
    """A complete, self-contained HTML page: inline CSS, no scripts, no external URLs."""
    body = "\n".join(_html_block(b, images) for b in blocks)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


# --------------------------------------------------------------------------------------------------
# Report sections
# --------------------------------------------------------------------------------------------------

SUMMARY_HEADERS = (
    "scenario", "compose file", "n", "c", "delay s", "ab rps", "ab cap", "steady rps", "ideal",
    "efficiency", "harness ceiling", "tutorial rps", "p50 / p99 / max ms", "max connect ms",
    "failed", "non-2xx", "threads before → peak", "processes", "RSS peak MB", "CPU peak %", "valid",
)  # fmt: skip


def _title(results: dict[str, Any]) -> str:
    """Report title, carrying the run id so printed copies can be told apart."""
    run_id = _str(results.get("run_id")) or "unknown run"
    return f"Flask concurrency playground — run {run_id}"


def _status_blocks(results: dict[str, Any]) -> list[Block]:
    """When the run happened, and a loud warning when it did not finish."""
    started = _str(results.get("started_at")) or "unknown"
    finished = _str(results.get("finished_at"))
    blocks: list[Block] = [
        Paragraph(f"Started {started}; finished {finished or 'never (incomplete)'}."),
    ]
    if _is_incomplete(results):
        count = len(_all_entries(results))
        blocks.append(
            Callout(
                [
                    Span("Incomplete run:", bold=True),
                    f" finished_at is null, so the runner was interrupted or is still running. "
                    f"This report covers the {count} entries recorded so far; scenarios that had not "
                    "run yet are simply absent.",
                ]
            )
        )
    return blocks


def _valid_cell(entry: dict[str, Any]) -> list[str | Span]:
    """"yes", or a bold INVALID/ERROR followed by the reasons, so a bad row cannot be misread."""
    status, reasons = _status(entry)
    if status == "ok":
        return ["yes"]
    if status == "unknown":
        return ["?"]
    return [Span("INVALID" if status == "invalid" else "ERROR", bold=True), f": {reasons}"]


def _summary_row(entry: dict[str, Any], calibration: dict[str, Any] | None) -> list[Inline]:
    """One summary-table row; every cell copes with nulls."""
    name, kind = _name(entry), _str(entry.get("kind"))
    if kind in ("calibration", "demo") and kind != name:
        name = f"{name} ({kind})"
    return [
        Span(name, bold=entry.get("kind") == "calibration"),
        Span(_str(entry.get("compose_file")), code=True) if entry.get("compose_file") else DASH,
        _fmt(entry.get("requests")),
        _fmt(entry.get("concurrency")),
        _fmt(entry.get("delay"), digits=2),
        _fmt_spread(entry, "rps"),
        _fmt(entry.get("ab_cap_rps")),
        _fmt_spread(entry, "steady_rps"),
        _fmt(entry.get("ideal_rps")),
        _fmt_pct(_efficiency(entry)),
        _fmt(_ceiling_for(entry, calibration)),
        _fmt(entry.get("tutorial_rps"), digits=2),
        _fmt_latency(entry),
        _fmt(entry.get("connect_max_ms"), digits=0),
        _fmt(entry.get("failed")),
        _fmt(entry.get("non_2xx")),
        _fmt_threads(entry),
        _fmt(entry.get("processes")),
        _fmt(entry.get("rss_peak_mb")),
        _fmt(entry.get("cpu_peak_pct"), digits=0),
        _valid_cell(entry),
    ]


def _row_class(entry: dict[str, Any]) -> str:
    """HTML row class: a bad row is tinted whatever its kind; the calibration row stands apart."""
    status = _status(entry)[0]
    if status in ("invalid", "error"):
        return status
    return "calibration" if entry.get("kind") == "calibration" else ""


def _summary_blocks(results: dict[str, Any]) -> list[Block]:
    """The one-row-per-entry table that the rest of the report explains."""
    entries = _all_entries(results)
    blocks: list[Block] = [Heading(2, "Summary")]
    if not entries:
        return [*blocks, Paragraph("No entries were recorded: there is nothing to summarise.")]
    calibration = _calibration(results)
    rows = [_summary_row(e, calibration) for e in entries]
    blocks.append(Table(SUMMARY_HEADERS, rows, [_row_class(e) for e in entries]))
    if any(len(_list(e.get("repeats"))) > 1 for e in entries):
        blocks.append(
            Paragraph("With repeats, ab rps and steady rps read \"median (min–max)\" over the repeats.")
        )
    bad = [e for e in entries if _status(e)[0] in ("invalid", "error")]
    if bad:
        listed = "; ".join(f"{_name(e)} at c={_fmt(e.get('concurrency'))} ({_status(e)[1]})" for e in bad)
        blocks.append(Paragraph([Span("Not valid:", bold=True), f" {listed}. See Why below."]))
    return blocks


def _sweep_blocks(results: dict[str, Any]) -> list[Block]:
    """A name × concurrency pivot of steady rps, so a sweep reads as curves even without the charts."""
    if not _is_sweep(results):
        return []
    cs = sorted({c for e in _scenarios(results) if (c := _concurrency(e)) is not None})
    names = list(dict.fromkeys(_name(e) for e in _scenarios(results)))
    cells: dict[tuple[str, int | None], dict[str, Any]] = {}
    for entry in _scenarios(results):
        cells.setdefault((_name(entry), _concurrency(entry)), entry)
    rows: list[list[Inline]] = []
    for name in names:
        row: list[Inline] = [name]
        for c in cs:
            entry = cells.get((name, c))
            if entry is None:
                row.append(DASH)
                continue
            text = f"{_fmt(entry.get('steady_rps'))} ({_fmt_pct(_efficiency(entry))})"
            status = _status(entry)[0]
            row.append([f"{text} ", Span("invalid", bold=True)] if status in ("invalid", "error") else text)
        rows.append(row)
    return [
        Heading(2, "Sweep"),
        Paragraph("Steady requests/s (efficiency against c/delay) for each scenario and concurrency."),
        Table(["scenario", *(f"c={c}" for c in cs)], rows),
    ]


SCALE_GOOD = 0.9


def _scale_blocks(results: dict[str, Any]) -> list[Block]:
    """For a scale run: how the delay was chosen, and per mode how far it scaled and what
    one more request in flight costs in memory."""
    scale = _dict(_dict(results.get("settings")).get("scale"))
    if not scale:
        return []
    delays = _dict(scale.get("delays"))
    blocks: list[Block] = [
        Heading(2, "Scale"),
        Paragraph(
            f"Measured CPU per request: {_fmt(scale.get('cpu_ms_per_request'), digits=2)} ms in "
            f"the app ({_str(scale.get('probe'))}, one process). So that CPU is not the limit, "
            f"each concurrency gets a delay that keeps the ideal c / delay near "
            f"{_fmt(scale.get('rate'))} requests/s, {_fmt_pct(_num(scale.get('utilisation')))} "
            "of what one core can serve: "
            + ", ".join(f"c={c}: {_fmt(d)} s" for c, d in delays.items()) + "."),
    ]
    rows: list[list[Inline]] = []
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in _scenarios(results):
        if entry.get("kind") != "probe":
            by_name.setdefault(_name(entry), []).append(entry)
    for name, entries in by_name.items():
        entries.sort(key=lambda e: _concurrency(e) or 0)
        good = [e for e in entries if _status(e)[0] == "ok"
                and (_efficiency(e) or 0) >= SCALE_GOOD]
        first_bad = next((e for e in entries if e not in good), None)
        # Memory per in-flight request only means something where the mode kept up: past
        # that, the extra clients wait in the kernel's listen queue, not in the process.
        top = max((e for e in good if _num(e.get("rss_per_request_kb")) is not None),
                  key=lambda e: _concurrency(e) or 0, default=None)
        rows.append([
            name,
            _fmt(_concurrency(good[-1])) if good else DASH,
            (f"c={_concurrency(first_bad)} ({_fmt_pct(_efficiency(first_bad))}"
             f"{', ' + _status(first_bad)[1] if _status(first_bad)[0] != 'ok' else ''})"
             if first_bad else "did not stop"),
            _fmt(max((_num(e.get("threads_peak")) or 0 for e in entries), default=None), digits=0),
            f"{_fmt(top.get('rss_per_request_kb'))} at c={_concurrency(top)}" if top else DASH,
        ])
    blocks.append(Table(["mode", f"highest c at >= {SCALE_GOOD:.0%} of ideal, no errors",
                         "stops scaling at", "most OS threads", "memory per in-flight request (kB)"],
                        rows))
    return blocks


#: At most this many requests served at once (requests/s x delay) reads as "serialised".
SERIALISED_AT_ONCE = 1.5
DEMO_HEADERS = ("demo", "load", "ours", "published", "threads before → peak", "at once", "shape")
DEMO_HOW_TO_READ = (
    "At once = the load tool's own requests/s × the sleep: how many sleeping requests the server "
    "overlapped. About 1 means it served them one after another (serialised), however many "
    "clients waited; about c means all of them at once (with ab, at most c · (n/c) / (n/c + 1), "
    "since ab sends its first request alone). Shape: serialised up to 1.5, concurrent from c/2, "
    "partly concurrent in between. A run with no sleep has no such figure: it measures CPU, not "
    "waiting. Ours is ab's time and requests/s, or the requests wrk completed in its run (its "
    "rate × its time), to compare with the published counts."
)


def _demos(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The companion demos' entries (kind "demo")."""
    return [e for e in _scenarios(results) if e.get("kind") == "demo"]


def _at_once(entry: dict[str, Any]) -> float | None:
    """Sleeping requests served at once, the tool's requests/s x delay; None with no sleep.

    The tool's own rate, not steady rps: a server that serialises runs at exactly 1 / delay
    whatever the clients do, while c / mean latency also counts ab's ramp-up (with n=10, c=5
    against one-at-a-time it reads 1.4, too close to the line)."""
    rps, delay = _num(entry.get("rps")), _num(entry.get("delay"))
    if rps is None or not delay or _status(entry)[0] == "error":
        return None
    return rps * delay


def demo_shape(entry: dict[str, Any]) -> str:
    """"serialised", "concurrent" or "partly concurrent" from :func:`_at_once`; a dash when the
    run had no sleep or no figures."""
    at_once, c = _at_once(entry), _num(entry.get("concurrency"))
    if at_once is None or c is None:
        return DASH
    if at_once <= SERIALISED_AT_ONCE:
        return "serialised"
    return "concurrent" if at_once >= 0.5 * c else "partly concurrent"


def _demo_cells(entry: dict[str, Any]) -> list[str]:
    """Text cells of one demo row, shared by the Markdown/HTML table and the terminal one."""
    tool = _str(entry.get("tool")) or "?"
    delay = _num(entry.get("delay"))
    sleep = f"sleep {delay:g} s" if delay else "no sleep"
    rps, taken = _num(entry.get("rps")), _num(entry.get("time_taken_s"))
    if tool == "ab":
        load = f"ab -n {_fmt(entry.get('requests'))} -c {_fmt(entry.get('concurrency'))}, {sleep}"
        ours = f"{_fmt(taken, digits=3)} s, {_fmt(rps, digits=2)} rps"
    else:
        load = f"{tool} -c {_fmt(entry.get('concurrency'))}, {sleep}"
        done = f"{rps * taken:,.0f}" if rps is not None and taken is not None else DASH
        ours = f"{done} requests in {_fmt(taken, digits=1)} s"
    if _status(entry)[0] in ("invalid", "error"):
        ours += f" ({_status(entry)[0]})"
    return [_name(entry), load, ours, _str(entry.get("published")) or DASH, _fmt_threads(entry),
            _fmt(_at_once(entry), digits=1), demo_shape(entry)]


def _demo_blocks(results: dict[str, Any]) -> list[Block]:
    """The companion demos beside what their write-ups published, and which ones serialise."""
    entries = _demos(results)
    if not entries:
        return []
    serialised = [_name(e) for e in entries if demo_shape(e) == "serialised"]
    return [
        Heading(2, "Companion demos: published vs ours"),
        Paragraph(DEMO_HOW_TO_READ),
        Table(DEMO_HEADERS, [_demo_cells(e) for e in entries], [_row_class(e) for e in entries]),
        Paragraph([Span("Serialised:", bold=True),
                   " " + (", ".join(serialised) if serialised else "none") + "."]),
    ]


def _derived_checks(entry: dict[str, Any], already_said: str) -> list[str]:
    """The report's own reading of the figures, for causes the runner's notes did not already name."""
    checks = []
    loadgen_cpu = _num(entry.get("loadgen_cpu_peak_pct"))
    if entry.get("loadgen_saturated") is True and "saturated" not in already_said:
        checks.append(
            f"load generator saturated (its CPU peaked at {_fmt(loadgen_cpu, digits=0)}%): these "
            "figures measure ab's limit, not the server's"
        )
    cpu = _num(entry.get("cpu_peak_pct"))
    cpu_said = "cpu-bound" in already_said or "cpu bound" in already_said
    if cpu is not None and cpu >= CPU_BOUND_PCT and not cpu_said:
        checks.append(
            f"app CPU peaked at {_fmt(cpu, digits=0)}% (100% = one core): CPU-bound, so requests "
            "queue behind computation rather than only behind the upstream delay"
        )
    connect = _num(entry.get("connect_max_ms"))
    syn_said = "syn" in already_said or "backlog" in already_said
    if connect is not None and connect >= SYN_RETRANSMIT_MS and not syn_said:
        checks.append(
            f"max connect {_fmt(connect, digits=0)} ms (≥ 1 s): at least one SYN was retransmitted, "
            "i.e. the listen backlog overflowed and a client waited for the kernel's retry"
        )
    return checks


def _why_items(entry: dict[str, Any]) -> list[Inline]:
    """Everything that explains this entry's numbers: error, invalid reasons, notes, own checks."""
    items: list[Inline] = []
    error = _str(entry.get("error"))
    if error:
        items.append([Span("could not run:", bold=True), f" {error}"])
    reasons = [_str(r) for r in _list(entry.get("invalid_reasons")) if _str(r)]
    items += [[Span("invalid:", bold=True), f" {r}"] for r in reasons]
    notes = [_str(n) for n in _list(entry.get("notes")) if _str(n)]
    items += notes
    checks = _derived_checks(entry, " ".join([error, *reasons, *notes]).lower())
    items += [[Span("report check:", bold=True), f" {c}"] for c in checks]
    efficiency = _efficiency(entry)
    explained = bool(reasons or notes or checks or error)
    if efficiency is not None and efficiency < TARGET_EFFICIENCY and not explained:
        items.append(
            f"reached {_fmt_pct(efficiency)} of the ideal c/delay and the runner recorded no diagnosis"
        )
    return items


def _why_blocks(results: dict[str, Any]) -> list[Block]:
    """Per-entry explanations: a missed target without a reason is the report's failure mode."""
    blocks: list[Block] = [Heading(2, "Why")]
    explained = 0
    for entry in _all_entries(results):
        items = _why_items(entry)
        if not items:
            continue
        explained += 1
        title = _str(entry.get("title"))
        heading = f"{_name(entry)} (c={_fmt(entry.get('concurrency'))})" + (f" — {title}" if title else "")
        efficiency = _efficiency(entry)
        blocks.append(Heading(3, heading))
        if efficiency is not None:
            blocks.append(Paragraph(f"Steady {_fmt(entry.get('steady_rps'))} rps of an ideal "
                                    f"{_fmt(entry.get('ideal_rps'))} ({_fmt_pct(efficiency)})."))
        blocks.append(BulletList(items))
    if not explained:
        blocks.append(
            Paragraph(
                f"Nothing to explain: every entry is valid, reached at least "
                f"{TARGET_EFFICIENCY:.0%} of its ideal, and carries no notes."
            )
        )
    return blocks


def _reproduce_blocks(results: dict[str, Any]) -> list[Block]:
    """The CLI line up front; the (long) per-entry commands go to the end of the report."""
    command = _str(results.get("command"))
    return [
        Heading(2, "How to reproduce"),
        Paragraph("The whole run:"),
        CodeBlock(command or "# command not recorded"),
        Paragraph("Each entry's own commands (up, load, down) are under \"Commands per entry\" below."),
    ]


def _entry_command_blocks(results: dict[str, Any]) -> list[Block]:
    """Every entry's own commands, so any single row can be re-run by hand."""
    blocks: list[Block] = [Heading(2, "Commands per entry")]
    labels = {"up": "bring it up", "load": "load it (from inside the compose network)",
              "host_load": "or load it from the host", "down": "tear it down"}  # fmt: skip
    for entry in _all_entries(results):
        commands = {k: _str(v) for k, v in _dict(entry.get("commands")).items() if _str(v)}
        if not commands:
            continue
        ordered = [k for k in labels if k in commands] + sorted(k for k in commands if k not in labels)
        text = "\n".join(f"# {labels.get(k, k)}\n{commands[k]}" for k in ordered)
        blocks += [Heading(3, f"{_name(entry)} (c={_fmt(entry.get('concurrency'))})"), CodeBlock(text)]
    if len(blocks) == 1:
        blocks.append(Paragraph("No entry recorded its commands."))
    return blocks


def _key_value_table(mapping: dict[str, Any]) -> Table:
    """A two-column table of every (flattened) key, values shown verbatim."""
    flat = _flatten(mapping)
    return Table(["key", "value"], [[Span(k, code=True), v or DASH] for k, v in flat.items()])


def _environment_blocks(results: dict[str, Any]) -> list[Block]:
    """Environment and settings, all keys: a number is meaningless without the machine it came from."""
    blocks: list[Block] = [Heading(2, "Environment")]
    environment = _dict(results.get("environment"))
    blocks.append(_key_value_table(environment) if environment else Paragraph("Not recorded."))
    settings = _dict(results.get("settings"))
    blocks.append(Heading(2, "Settings"))
    blocks.append(_key_value_table(settings) if settings else Paragraph("Not recorded."))
    blocks.append(Paragraph(f"Results schema version: {_fmt(results.get('schema_version'))}."))
    return blocks


CHART_ALTS = {
    "rps.png": "Requests per second per scenario against the ideal, the ab cap, the harness ceiling "
    "and the tutorial's figure",
    "threads.png": "Threads before and at peak during load per scenario",
    "sweep_rps.png": "Steady requests per second against concurrency",
    "sweep_threads.png": "Peak threads against concurrency",
    "sweep_rss.png": "Peak RSS against concurrency",
    "sweep_efficiency.png": "Steady requests per second over the ideal, against concurrency",
    "sweep_rss_per_request.png": "Memory per in-flight request against concurrency",
}


def _chart_blocks(chart_names: Sequence[str]) -> list[Block]:
    """Chart images by relative file name (the HTML renderer swaps in data URIs)."""
    blocks: list[Block] = [Heading(2, "Charts")]
    if not chart_names:
        return [*blocks, Paragraph("No chart: no entry has figures to plot.")]
    return blocks + [Image(name, CHART_ALTS.get(name, name)) for name in chart_names]


def _document(results: dict[str, Any], chart_names: Sequence[str]) -> list[Block]:
    """The whole report, in reading order."""
    return [
        Heading(1, _title(results)),
        *_status_blocks(results),
        *_reproduce_blocks(results),
        Heading(2, "How to read this"),
        Paragraph(HOW_TO_READ),
        *_summary_blocks(results),
        *_sweep_blocks(results),
        *_scale_blocks(results),
        *_demo_blocks(results),
        *_why_blocks(results),
        *_chart_blocks(chart_names),
        *_environment_blocks(results),
        *_entry_command_blocks(results),
    ]


# --------------------------------------------------------------------------------------------------
# Charts
# --------------------------------------------------------------------------------------------------

STEADY_COLOR = "#1f77b4"
AB_COLOR = "#9ecae1"
INVALID_FACE = "#d9d9d9"
INVALID_EDGE = "#7f7f7f"


def _new_figure(*, width: float, height: float) -> Figure:
    """A figure detached from pyplot's global state, with its own Agg canvas."""
    figure = Figure(figsize=(width, height), dpi=CHART_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Figure, path: Path) -> None:
    """Save without the Software tag so identical data gives identical bytes."""
    figure.savefig(path, format="png", dpi=CHART_DPI, metadata=PNG_METADATA)


def _common_concurrency(entries: Sequence[dict[str, Any]]) -> int | None:
    """The concurrency most bars share (ties: the higher), named once in the title."""
    counts: dict[int, int] = {}
    for entry in entries:
        c = _concurrency(entry)
        if c is not None:
            counts[c] = counts.get(c, 0) + 1
    return max(counts, key=lambda c: (counts[c], c)) if counts else None


def _bar_label(entry: dict[str, Any], common_c: int | None) -> str:
    """Y tick label: the name, the concurrency when it differs from the title's, the worker count."""
    parts = []
    c = _concurrency(entry)
    if c is not None and c != common_c:
        parts.append(f"c={c}")
    processes = _num(entry.get("processes"))
    if processes and processes > 1:
        parts.append(f"×{int(processes)} proc")
    return _name(entry) + (f" ({', '.join(parts)})" if parts else "")


def _chart_concurrency_label(common_c: int | None) -> str:
    """Title fragment for the shared concurrency; odd ones out are labelled on their own bar."""
    return f"c={common_c}" if common_c is not None else "c unknown"


def _value_label(
    ax: Any, value: float, y: float, x_max: float, *, dark_bar: bool, clear_of: float = 0.0
) -> None:
    """Write a bar's value inside its end when it fits, so it never collides with the marker lines
    that sit just beyond a bar that nearly reaches its ideal; a short bar's label goes past the
    row's markers (``clear_of``) instead."""
    inside = value >= x_max * 0.12
    ax.text(
        value - x_max * 0.006 if inside else max(value, clear_of) + x_max * 0.008,
        y,
        _fmt(value),
        va="center",
        ha="right" if inside else "left",
        fontsize=8,
        color="white" if inside and dark_bar else "#222222",
    )


def _plot_rps(results: dict[str, Any], path: Path) -> bool:
    """Steady and ab rps per scenario against ideal, ab cap, harness ceiling and tutorial figure."""
    entries = _main_entries(results)
    keys = ("steady_rps", "rps", "ideal_rps", "ab_cap_rps", "tutorial_rps")
    if not any(_num(e.get(k)) is not None for e in entries for k in keys):
        return False
    calibration = _calibration(results)
    ceiling = _num(calibration.get("steady_rps")) if calibration else None
    figure = _new_figure(width=11, height=2.6 + 0.62 * len(entries))
    ax = figure.add_subplot()
    values = [v for e in entries for k in keys if (v := _num(e.get(k))) is not None]
    x_max = max([*values, ceiling or 0.0, 1.0]) * 1.22
    height = 0.36
    for i, entry in enumerate(entries):
        status = _status(entry)[0]
        bad = status in ("invalid", "error")
        steady, ab = _num(entry.get("steady_rps")), _num(entry.get("rps"))
        markers = [v for k in ("ideal_rps", "ab_cap_rps", "tutorial_rps") if (v := _num(entry.get(k)))]
        clear_of = max(markers, default=0.0)
        face = (INVALID_FACE, INVALID_FACE) if bad else (STEADY_COLOR, AB_COLOR)
        hatch = "///" if bad else None
        edge = INVALID_EDGE if bad else "none"
        if steady is not None:
            ax.barh(i - height / 2, steady, height, color=face[0], hatch=hatch, edgecolor=edge)
            _value_label(ax, steady, i - height / 2, x_max, dark_bar=not bad, clear_of=clear_of)
        if ab is not None:
            ax.barh(i + height / 2, ab, height, color=face[1], hatch=hatch, edgecolor=edge)
            _value_label(ax, ab, i + height / 2, x_max, dark_bar=False, clear_of=clear_of)
        for key, style, color in (("ideal_rps", "-", "black"), ("ab_cap_rps", "--", "#d62728")):
            value = _num(entry.get(key))
            if value is not None:
                ax.vlines(value, i - 0.46, i + 0.46, colors=color, linestyles=style, linewidth=1.8)
        tutorial = _num(entry.get("tutorial_rps"))
        if tutorial is not None:
            ax.plot([tutorial], [i], marker="*", markersize=13, color="#ff7f0e",
                    markeredgecolor="black", markeredgewidth=0.6, linestyle="none")  # fmt: skip
        if status == "error" and steady is None and ab is None:
            ax.text(x_max * 0.01, i, "error: could not run (see Why)", va="center", ha="left",
                    fontsize=9, fontweight="bold", color="#b00020")  # fmt: skip
        elif bad:
            ax.text(x_max * 0.995, i, "invalid", va="center", ha="right", fontsize=9,
                    fontweight="bold", color="#b00020")  # fmt: skip
    if ceiling is not None:
        ax.axvline(ceiling, color="#2ca02c", linestyle=":", linewidth=2)
    common_c = _common_concurrency(entries)
    ax.set_yticks(range(len(entries)), labels=[_bar_label(e, common_c) for e in entries])
    ax.invert_yaxis()
    ax.set_xlim(0, x_max)
    ax.set_xlabel("requests per second")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    delay = _dict(results.get("settings")).get("delay")
    if delay is None:  # each scenario at its own default: name the delay if they share one
        delays = {_num(e.get("delay")) for e in entries}
        delay = delays.pop() if len(delays) == 1 else None
    delay = _fmt(delay, digits=2)
    ax.set_title(f"Throughput, {_chart_concurrency_label(common_c)}, delay {delay} s "
                 f"(run {_str(results.get('run_id')) or '?'})")  # fmt: skip
    handles = [
        Patch(color=STEADY_COLOR, label="steady rps (c / mean latency)"),
        Patch(color=AB_COLOR, label="ab's own rps"),
        Line2D([], [], color="black", linewidth=1.8, label="ideal (c / delay)"),
        Line2D([], [], color="#d62728", linestyle="--", linewidth=1.8, label="ab cap n/((n/c+1)·delay)"),
        Line2D([], [], marker="*", markersize=12, color="#ff7f0e", markeredgecolor="black",
               linestyle="none", label="tutorial's published rps"),  # fmt: skip
        Patch(facecolor=INVALID_FACE, edgecolor=INVALID_EDGE, hatch="///", label="invalid run"),
    ]
    if ceiling is not None:
        handles.insert(4, Line2D([], [], color="#2ca02c", linestyle=":", linewidth=2,
                                 label=f"harness ceiling (calibration {_fmt(ceiling)})"))  # fmt: skip
    figure.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    _save(figure, path)
    return True


def _plot_threads(results: dict[str, Any], path: Path) -> bool:
    """Threads before the load and at its peak: how each server turns concurrency into threads."""
    entries = _main_entries(results)
    if not any(_num(e.get(k)) is not None for e in entries for k in ("threads_before", "threads_peak")):
        return False
    figure = _new_figure(width=10, height=2.3 + 0.55 * len(entries))
    ax = figure.add_subplot()
    peaks = [_num(e.get(k)) or 0.0 for e in entries for k in ("threads_before", "threads_peak")]
    x_max = max([*peaks, 1.0]) * 1.15
    height = 0.38
    for i, entry in enumerate(entries):
        bad = _status(entry)[0] in ("invalid", "error")
        bars = ((-height / 2, "threads_before", "#c7c7c7"), (height / 2, "threads_peak", "#8c564b"))
        for offset, key, color in bars:
            value = _num(entry.get(key))
            if value is None:
                continue
            ax.barh(i + offset, value, height, color=INVALID_FACE if bad else color,
                    hatch="///" if bad else None, edgecolor=INVALID_EDGE if bad else "none")  # fmt: skip
            ax.text(value + x_max * 0.005, i + offset, _fmt(entry.get(key)), va="center", fontsize=8)
        if _status(entry)[0] == "error" and _num(entry.get("threads_peak")) is None:
            ax.text(x_max * 0.01, i, "error: could not run (see Why)", va="center", ha="left",
                    fontsize=9, fontweight="bold", color="#b00020")  # fmt: skip
        elif bad:
            ax.text(x_max * 0.995, i, "invalid", va="center", ha="right", fontsize=9,
                    fontweight="bold", color="#b00020")  # fmt: skip
    common_c = _common_concurrency(entries)
    ax.set_yticks(range(len(entries)), labels=[_bar_label(e, common_c) for e in entries])
    ax.invert_yaxis()
    ax.set_xlim(0, x_max)
    ax.set_xlabel("threads (all processes of the service)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(f"Threads before vs peak during load, {_chart_concurrency_label(common_c)}")
    handles = [
        Patch(color="#c7c7c7", label="before load"),
        Patch(color="#8c564b", label="peak during load"),
        Patch(facecolor=INVALID_FACE, edgecolor=INVALID_EDGE, hatch="///", label="invalid run"),
    ]
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    _save(figure, path)
    return True


def _sweep_series(results: dict[str, Any], key: str) -> dict[str, list[tuple[int, float, bool]]]:
    """Per scenario name: (concurrency, value, is_bad) points sorted by concurrency."""
    series: dict[str, list[tuple[int, float, bool]]] = {}
    for entry in _scenarios(results):
        c, value = _concurrency(entry), _num(entry.get(key))
        if c is None or value is None:
            continue
        bad = _status(entry)[0] in ("invalid", "error")
        series.setdefault(_name(entry), []).append((c, value, bad))
    return {name: sorted(points) for name, points in series.items()}


def _plot_sweep(results: dict[str, Any], path: Path, *, key: str, ylabel: str, title: str) -> bool:
    """One line per scenario against concurrency; invalid points are crossed out."""
    series = _sweep_series(results, key)
    if not series:
        return False
    figure = _new_figure(width=11, height=6)
    ax = figure.add_subplot()
    all_cs = sorted({c for points in series.values() for c, _, _ in points})
    styles = ("-", "--", "-.", ":")
    for index, (name, points) in enumerate(series.items()):
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, marker="o", linestyle=styles[(index // 10) % len(styles)],
                color=f"C{index % 10}", label=name)  # fmt: skip
        bad = [(c, v) for c, v, is_bad in points if is_bad]
        if bad:
            ax.plot([c for c, _ in bad], [v for _, v in bad], marker="x", markersize=11,
                    markeredgewidth=2, color="black", linestyle="none")  # fmt: skip
    handles, labels = ax.get_legend_handles_labels()
    if key == "steady_rps":
        # The ideal per concurrency from the entries themselves: a scale run picks a delay
        # per concurrency, so c / delay is not one straight line.
        ideal = {c: v for e in _scenarios(results)
                 if (c := _concurrency(e)) is not None and (v := _num(e.get("ideal_rps")))}
        if ideal:
            cs = sorted(ideal)
            line = ax.plot(cs, [ideal[c] for c in cs], color="black", linestyle="--",
                           linewidth=1.2, label="ideal (c / delay)")  # fmt: skip
            handles.append(line[0])
        calibration = _calibration(results)
        if calibration:
            c, ceiling = _concurrency(calibration), _num(calibration.get("steady_rps"))
            if c is not None and ceiling is not None:
                star = ax.plot([c], [ceiling], marker="*", markersize=15, color="gold",
                               markeredgecolor="black", linestyle="none",
                               label=f"harness ceiling (calibration, c={c})")  # fmt: skip
                handles.append(star[0])
    if any(is_bad for points in series.values() for _, _, is_bad in points):
        handles.append(Line2D([], [], marker="x", markersize=10, markeredgewidth=2, color="black",
                              linestyle="none", label="invalid point"))  # fmt: skip
    if len(all_cs) > 1 and all_cs[0] > 0 and all_cs[-1] / all_cs[0] >= 10:
        ax.set_xscale("log")
    ax.set_xticks(all_cs, labels=[str(c) for c in all_cs])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(bottom=0)
    ax.set_xlabel("concurrency (c)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.set_title(f"{title} (run {_str(results.get('run_id')) or '?'})")
    figure.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    _save(figure, path)
    return True


def _write_charts(results: dict[str, Any], run_dir: Path) -> list[str]:
    """Write every chart that has data; return their file names in report order."""
    written = []
    if _plot_rps(results, run_dir / "rps.png"):
        written.append("rps.png")
    if _plot_threads(results, run_dir / "threads.png"):
        written.append("threads.png")
    if _is_sweep(results):
        sweeps = (
            ("sweep_rps.png", "steady_rps", "steady requests per second", "Steady requests/s vs concurrency"),
            ("sweep_threads.png", "threads_peak", "peak threads", "Peak threads vs concurrency"),
            ("sweep_rss.png", "rss_peak_mb", "peak RSS (MB)", "Peak RSS vs concurrency"),
            ("sweep_efficiency.png", "efficiency", "steady / ideal", "Efficiency vs concurrency"),
            ("sweep_rss_per_request.png", "rss_per_request_kb", "kB per in-flight request",
             "Memory per in-flight request vs concurrency"),
        )
        for file_name, key, ylabel, title in sweeps:
            if _plot_sweep(results, run_dir / file_name, key=key, ylabel=ylabel, title=title):
                written.append(file_name)
    return written


# --------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------


def write_report(*, run_dir: Path, results: dict[str, Any]) -> list[Path]:
    """Write the charts, ``report.md`` and a self-contained ``report.html`` into ``run_dir``.

    Returns the paths written, charts first (the HTML embeds them, so they are produced first),
    then ``report.md`` and ``report.html``. Charts without data are skipped, not left blank.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    results = _dict(results)
    chart_names = _write_charts(results, run_dir)
    blocks = _document(results, chart_names)
    markdown_path, html_path = run_dir / "report.md", run_dir / "report.html"
    markdown_path.write_text(_render_markdown(blocks), encoding="utf-8", newline="\n")
    images = {name: (run_dir / name).read_bytes() for name in chart_names}
    page = _render_html(blocks, title=_title(results), images=images)
    html_path.write_text(page, encoding="utf-8", newline="\n")
    return [run_dir / name for name in chart_names] + [markdown_path, html_path]


def _valid_text(entry: dict[str, Any]) -> Text:
    """A coloured validity cell for the terminal; Text (not markup) so results cannot inject styles."""
    status, reasons = _status(entry)
    if status == "ok":
        return Text("yes", style="green")
    if status == "unknown":
        return Text("?")
    label = "INVALID" if status == "invalid" else "ERROR"
    return Text.assemble((label, "bold red"), f": {reasons}")


def demo_table(*, results: dict[str, Any]) -> RichTable | None:
    """The companion demos for the terminal, published beside ours; None when the run has none."""
    entries = _demos(_dict(results))
    if not entries:
        return None
    table = RichTable(title="Companion demos: published vs ours")
    for header in DEMO_HEADERS:
        table.add_column(header, justify="right" if header == "at once" else "left")
    for entry in entries:
        cells = _demo_cells(entry)
        shape = Text(cells[-1], style={"serialised": "bold red", "concurrent": "green"}.get(
            cells[-1], "yellow"))
        table.add_row(*(Text(c) for c in cells[:-1]), shape)
    return table


def summary_table(*, results: dict[str, Any]) -> RichTable:
    """The end-of-run table for the terminal: the figures that decide whether a scenario kept up."""
    results = _dict(results)
    table = RichTable(title=_title(results), show_lines=False)
    if _is_incomplete(results):
        table.caption = "incomplete run: finished_at is null"
    headers = ("scenario", "c", "steady rps", "ideal", "efficiency", "ab rps / cap", "p99 ms",
               "threads before→peak", "valid")  # fmt: skip
    for header in headers:
        table.add_column(header, justify="left" if header in ("scenario", "valid") else "right")
    for entry in _all_entries(results):
        latency = _dict(entry.get("latency_ms"))
        table.add_row(
            Text(_name(entry), style="bold" if entry.get("kind") == "calibration" else ""),
            Text(_fmt(entry.get("concurrency"))),
            Text(_fmt_spread(entry, "steady_rps")),
            Text(_fmt(entry.get("ideal_rps"))),
            Text(_fmt_pct(_efficiency(entry))),
            Text(f"{_fmt_spread(entry, 'rps')} / {_fmt(entry.get('ab_cap_rps'))}"),
            Text(_fmt(latency.get("p99"), digits=0)),
            Text(_fmt_threads(entry)),
            _valid_text(entry),
        )
    return table


@dataclass(frozen=True)
class _CompareRow:
    """One (name, concurrency) key with its entry in each run (None where absent)."""

    name: str
    concurrency: int | None
    a: dict[str, Any] | None
    b: dict[str, Any] | None


def _compare_rows(a: dict[str, Any], b: dict[str, Any]) -> list[_CompareRow]:
    """Pair entries by (name, concurrency): A's order first, then entries only B has."""
    def index(results: dict[str, Any]) -> dict[tuple[str, int | None], dict[str, Any]]:
        keyed: dict[tuple[str, int | None], dict[str, Any]] = {}
        for entry in _all_entries(results):
            keyed.setdefault((_name(entry), _concurrency(entry)), entry)
        return keyed

    in_a, in_b = index(a), index(b)
    keys = list(dict.fromkeys([*in_a, *in_b]))
    return [_CompareRow(name, c, in_a.get((name, c)), in_b.get((name, c))) for name, c in keys]


def _compare_cells(row: _CompareRow) -> list[str]:
    """Text cells of a comparison row, shared by the Markdown and the rich table."""
    def figure(entry: dict[str, Any] | None, key: str) -> str:
        return "missing" if entry is None else _fmt(entry.get(key))

    steady_a = _num(row.a.get("steady_rps")) if row.a else None
    steady_b = _num(row.b.get("steady_rps")) if row.b else None
    return [
        row.name,
        _fmt(row.concurrency),
        figure(row.a, "steady_rps"),
        figure(row.b, "steady_rps"),
        _fmt_delta(steady_a, steady_b),
        figure(row.a, "rps"),
        figure(row.b, "rps"),
        figure(row.a, "threads_peak"),
        figure(row.b, "threads_peak"),
    ]


def _valid_short(entry: dict[str, Any] | None, side: str) -> str:
    """Validity as one word for the comparison, naming the run an entry is missing from."""
    if entry is None:
        return f"missing in {side}"
    return {"ok": "yes", "invalid": "INVALID", "error": "ERROR", "unknown": "?"}[_status(entry)[0]]


def _diff_line(label: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    """Which (flattened) keys differ between two mappings, with both values, truncated."""
    flat_a, flat_b = _flatten(a), _flatten(b)
    keys = sorted(set(flat_a) | set(flat_b))
    missing = "(absent)"

    def short(value: str | None) -> str:
        text = missing if value is None else (value or DASH)
        return text if len(text) <= 40 else text[:39] + "…"

    differ = [k for k in keys if flat_a.get(k) != flat_b.get(k)]
    if not differ:
        return f"{label}: identical ({len(keys)} keys)."
    parts = [f"{k} ({short(flat_a.get(k))} → {short(flat_b.get(k))})" for k in differ]
    return f"{label}: {len(differ)} of {len(keys)} keys differ: " + "; ".join(parts) + "."


def _valid_short_text(entry: dict[str, Any] | None, side: str) -> Text:
    """:func:`_valid_short`, coloured for the terminal (the reasons are in the full report)."""
    word = _valid_short(entry, side)
    style = {"yes": "green", "INVALID": "bold red", "ERROR": "bold red"}.get(word, "yellow")
    return Text(word, style=style)


COMPARE_HEADERS = (
    "scenario", "c", "steady rps A", "steady rps B", "Δ steady", "ab rps A", "ab rps B",
    "threads peak A", "threads peak B", "valid A", "valid B",
)  # fmt: skip


def compare(*, a: dict[str, Any], b: dict[str, Any]) -> str:
    """Markdown comparing two runs side by side, keyed by (scenario, concurrency).

    Δ steady is (B − A) / A. Entries present in only one run say "missing in A/B" so a scenario that
    vanished is not mistaken for one that stood still.
    """
    a, b = _dict(a), _dict(b)
    run_a, run_b = _str(a.get("run_id")) or "?", _str(b.get("run_id")) or "?"
    rows: list[list[Inline]] = [
        [*_compare_cells(r), _valid_short(r.a, "A"), _valid_short(r.b, "B")] for r in _compare_rows(a, b)
    ]
    blocks: list[Block] = [Heading(2, f"Comparison: A = run {run_a}, B = run {run_b}")]
    for label, results in (("A", a), ("B", b)):
        if _is_incomplete(results):
            blocks.append(Callout([Span(f"Run {label} is incomplete", bold=True), " (finished_at is null)."]))
    blocks.append(Table(COMPARE_HEADERS, rows) if rows else Paragraph("Neither run has any entry."))
    for label, key in (("Environment", "environment"), ("Settings", "settings")):
        blocks.append(Paragraph(_diff_line(label, _dict(a.get(key)), _dict(b.get(key)))))
    return _render_markdown(blocks)


def compare_table(*, a: dict[str, Any], b: dict[str, Any]) -> RichTable:
    """The same comparison as :func:`compare`, as a rich table for the terminal."""
    a, b = _dict(a), _dict(b)
    run_a, run_b = _str(a.get("run_id")) or "?", _str(b.get("run_id")) or "?"
    table = RichTable(title=f"A = run {run_a}  vs  B = run {run_b}")
    for header in COMPARE_HEADERS:
        table.add_column(header, justify="left" if header in ("scenario", "valid A", "valid B") else "right")
    for row in _compare_rows(a, b):
        cells = _compare_cells(row)
        delta = Text(cells[4])
        if cells[4].startswith("+"):
            delta.stylize("green")
        elif cells[4].startswith("-"):
            delta.stylize("red")
        table.add_row(*(Text(c) for c in cells[:4]), delta, *(Text(c) for c in cells[5:]),
                      _valid_short_text(row.a, "A"), _valid_short_text(row.b, "B"))  # fmt: skip
    table.caption = _diff_line("Environment", _dict(a.get("environment")), _dict(b.get("environment")))
    return table

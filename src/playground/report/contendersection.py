"""The contenders' section: one table and one chart that answer, for this app, at each load
measured (the tutorial's, and up to 10,000 in flight in a scale run), which mode holds the
most requests per MB and per CPU-second, and which ones quietly serialise.

It appears when the run has a ``contender`` entry (``playground run --contenders``,
``playground scale --contenders``); any tutorial scenario measured in the same run sits beside
them. Every figure is an entry's own (rps, steady_rps, efficiency, latency, threads, RSS, CPU);
the only quotients added are said in :data:`HOW_TO_READ`, and the verdict is
:func:`playground.core.verdicts.overlap`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from matplotlib.patches import Patch

from playground.core.notation import EM_DASH
from playground.core.results import Entry, Run
from playground.core.verdicts import CONCURRENT_SHARE, SERIALISED_AT_ONCE
from playground.report.benchcharts import bench_figure, save_bench_chart
from playground.report.document import (
    Block,
    BulletList,
    Heading,
    Image,
    Inline,
    Paragraph,
    Span,
    Table,
)
from playground.report.reading import SECTIONS, efficiency, fmt, fmt_pct, fmt_rate, status

#: The entries the section compares: the contenders, and the tutorial's scenarios beside them.
GROUPS = ("contender", "scenario")
CHART_NAME = "contenders.png"
CHART_ALT = (
    "Requests held per MB of peak RSS and requests per CPU-second, per mode and "
    "concurrency, coloured by verdict"
)
HEADERS = (
    "mode",
    "c",
    "req/s",
    "efficiency",
    "p50 / p99 ms",
    "threads max",
    "processes",
    "RSS peak MB",
    "MB per request in flight",
    "requests per MB",
    "CPU ms per request",
    "requests per CPU-s",
    "verdict",
)
HOW_TO_READ = (
    "One row per mode and concurrency measured. Req/s is the load tool's own figure; "
    "efficiency is steady requests/s over the ideal c / delay. Requests per MB: the requests "
    "in flight at once by Little's law (steady requests/s × delay; the tool's rate where the "
    "run never settled) over the app's peak RSS, all of its processes. MB per request in "
    "flight: (peak − before) RSS over c, what one more request in flight costs; past the "
    "point where a mode is capped the rest of c waits in the kernel's listen queue, not in the "
    "process, so read it only where the verdict is concurrent. Requests per CPU-s: 1000 / the "
    "app's CPU ms per request. Verdict: serialised when the tool's requests/s × delay is at "
    f"most {SERIALISED_AT_ONCE:g} (one request at a time, whatever c is); concurrent when the "
    f"mode held at least {CONCURRENT_SHARE:.0%} of c in flight; capped in between (a thread "
    "pool, a connection cap or the CPU held it to a number below c). Below the table, the "
    "most requests per MB and per CPU-second among the valid concurrent rows: a capped mode "
    "may spend little per request, but it left the rest of c waiting. Invalid rows (failed "
    "requests, non-2xx, a saturated load generator) are shown and never win."
)
VERDICT_COLOURS = {"concurrent": "#2ca02c", "capped": "#ff7f0e", "serialised": "#d62728"}


def compared(run: Run) -> list[Entry]:
    """The entries the section compares, by concurrency then name; none without a contender
    (the section is the contenders')."""
    chosen = [e for e in run.scenarios if e.kind in GROUPS and not e.skipped]
    if not any(e.kind == "contender" for e in chosen):
        return []
    return sorted(chosen, key=lambda e: (e.concurrency, e.name))


def verdict(entry: Entry) -> str | None:
    """Decided when measured (`Entry.shape`, `verdicts.verdicts`)."""
    return entry.shape


def held(entry: Entry) -> float | None:
    """Requests in flight at once (Little's law): steady requests/s x delay, else the tool's."""
    rate = entry.steady_rps if entry.steady_rps is not None else entry.rps
    return None if rate is None or not entry.delay else rate * entry.delay


def requests_per_mb(entry: Entry) -> float | None:
    in_flight = held(entry)
    return None if in_flight is None or not entry.rss_peak_mb else in_flight / entry.rss_peak_mb


def requests_per_cpu_s(entry: Entry) -> float | None:
    return None if not entry.cpu_ms_per_request else 1000 / entry.cpu_ms_per_request


def mb_per_request(entry: Entry) -> float | None:
    kb = entry.rss_per_request_kb
    return None if kb is None else kb / 1024


def _competes(entry: Entry) -> bool:
    """Only a valid run that held the load: a capped mode may spend little per request, but it
    left the rest of c waiting."""
    return status(entry)[0] == "ok" and verdict(entry) == "concurrent"


def _best(entries: Sequence[Entry], key: Callable[[Entry], float | None]) -> Entry | None:
    scored = [(figure, e) for e in entries if (figure := key(e)) is not None]
    return max(scored, key=lambda pair: pair[0])[1] if scored else None


def skipped(run: Run) -> list[Entry]:
    """A scale run's entries not run because the mode had stopped scaling lower down."""
    return [e for e in run.scenarios if e.kind in GROUPS and e.skipped]


def answer(entries: Sequence[Entry], not_run: Sequence[Entry] = ()) -> list[Inline]:
    """One line per concurrency: who holds the most requests per MB and per CPU-second (valid
    and concurrent), who serialised, who was capped, and who was not run there."""
    lines: list[Inline] = []
    for c in sorted({e.concurrency for e in [*entries, *not_run]}):
        at_c = [e for e in entries if e.concurrency == c]
        competing = [e for e in at_c if _competes(e)]
        parts: list[str] = []
        if per_mb := _best(competing, requests_per_mb):
            parts.append(
                f" most requests per MB: {per_mb.name} ({fmt(requests_per_mb(per_mb), digits=2)});"
            )
        if per_cpu := _best(competing, requests_per_cpu_s):
            parts.append(
                f" most requests per CPU-second: {per_cpu.name} "
                f"({fmt(requests_per_cpu_s(per_cpu), digits=0)});"
            )
        if not competing and any(verdict(e) == "capped" for e in at_c):
            parts.append(" no mode held this load;")
        for word in ("serialised", "capped"):
            named = [e.name for e in at_c if verdict(e) == word]
            parts.append(f" {word}: {', '.join(named) if named else 'none'};")
        stopped = [e.name for e in not_run if e.concurrency == c]
        if stopped:
            parts.append(f" not run, stopped scaling lower: {', '.join(stopped)};")
        parts[-1] = parts[-1][:-1] + "."
        lines.append([Span(f"c={c}:", bold=True), *parts])
    return lines


def _verdict_cell(entry: Entry) -> Inline:
    word = verdict(entry) or EM_DASH
    state = status(entry)[0]
    return word if state == "ok" else [f"{word} ", Span(state.upper(), bold=True)]


def row(entry: Entry) -> list[Inline]:
    latency = " / ".join(fmt(entry.latency_ms.get(k), digits=0) for k in ("p50", "p99"))
    return [
        entry.name,
        fmt(entry.concurrency),
        fmt_rate(entry.rps),
        fmt_pct(efficiency(entry)),
        latency,
        fmt(entry.threads_peak),
        fmt(entry.processes),
        fmt(entry.rss_peak_mb),
        fmt(mb_per_request(entry), digits=3),
        fmt(requests_per_mb(entry), digits=2),
        fmt(entry.cpu_ms_per_request, digits=2),
        fmt(requests_per_cpu_s(entry), digits=0),
        _verdict_cell(entry),
    ]


def contender_blocks(run: Run, chart: str | None) -> list[Block]:
    """The section; nothing when the run has no contender."""
    entries = compared(run)
    if not entries:
        return []
    blocks: list[Block] = [
        Heading(
            2, f"{SECTIONS['contender'][0]}: requests per MB, per CPU-second, and who serialises"
        ),
        Paragraph(HOW_TO_READ),
        Table(HEADERS, [row(e) for e in entries]),
        BulletList(answer(entries, skipped(run))),
    ]
    if chart:
        blocks.append(Image(chart, CHART_ALT))
    return blocks


def write_contender_chart(run: Run, run_dir: Path) -> str | None:
    """Two bar panels, requests per MB and requests per CPU-second, one bar per mode and
    concurrency, coloured by verdict; invalid rows hatched. None when nothing can be plotted."""
    entries = [
        e
        for e in compared(run)
        if requests_per_mb(e) is not None or requests_per_cpu_s(e) is not None
    ]
    if not entries:
        return None
    figure = bench_figure(width=11, height=1.6 + 0.3 * len(entries))
    axes = figure.subplots(1, 2, sharey=True)
    ys = range(len(entries))
    colours = [VERDICT_COLOURS.get(verdict(e) or "", "#7f7f7f") for e in entries]
    for ax, key, title in (
        (axes[0], requests_per_mb, "requests in flight per MB of peak RSS"),
        (axes[1], requests_per_cpu_s, "requests per CPU-second"),
    ):
        bars = ax.barh(ys, [key(e) or 0 for e in entries], color=colours)
        for bar, entry in zip(bars, entries, strict=False):
            if status(entry)[0] != "ok":
                bar.set_hatch("//")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(list(ys), [f"{e.name} (c={e.concurrency})" for e in entries], fontsize=8)
    axes[0].invert_yaxis()
    handles = [Patch(color=colour, label=word) for word, colour in VERDICT_COLOURS.items()]
    handles.append(Patch(facecolor="white", edgecolor="#7f7f7f", hatch="//", label="invalid run"))
    figure.legend(
        handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False
    )
    figure.suptitle(f"{SECTIONS['contender'][0]} (run {run.run_id or '?'})")
    save_bench_chart(figure, run_dir / CHART_NAME)
    return CHART_NAME

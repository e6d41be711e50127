"""The report's charts (PNG, matplotlib's Agg canvas, no global pyplot state).

* ``rps.png`` and ``threads.png``: one bar group per scenario name, at the run's main
  concurrency (else the highest measured); the calibration is the "harness ceiling" line.
* ``latency.png``: the distribution of every request's response time per entry (from ab's
  per-request file), as cumulative curves.
* ``timeline-<name>-c<c>.png``: per entry, threads, RSS and CPU against time through the load:
  what `top -H` showed, sampled every 0.5 s.
* ``sweep_*.png``: a sweep's figures against concurrency.

A chart with nothing to plot is not written (and not linked). Output is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, NullLocator

from playground.core.charting import new_figure, save_png
from playground.core.results import Entry, Run
from playground.report.reading import fmt, is_sweep, main_entries, status

CHART_DPI = 100
#: Wide enough to read, narrow enough for a laptop screen's text column (1100 px at 100 dpi).
WIDTH_IN = 11

CHART_ALTS = {
    "rps.png": "Requests per second per scenario against the ideal, the ab cap, the harness ceiling "
    "and the tutorial's figure",
    "threads.png": "Threads before and at peak during load per scenario",
    "latency.png": "Distribution of response times per entry",
    "sweep_rps.png": "Steady requests per second against concurrency",
    "sweep_threads.png": "Peak threads against concurrency",
    "sweep_rss.png": "Peak RSS against concurrency",
    "sweep_efficiency.png": "Steady requests per second over the ideal, against concurrency",
    "sweep_rss_per_request.png": "Memory per in-flight request against concurrency",
}


def bench_figure(*, width: float, height: float) -> Figure:
    """A figure detached from pyplot's global state, with its own Agg canvas."""
    return new_figure(figsize=(min(width, WIDTH_IN), height), dpi=CHART_DPI, layout="constrained")


def save_bench_chart(figure: Figure, path: Path) -> None:
    """Save the deterministic way (:func:`playground.core.charting.save_png`)."""
    save_png(figure, path, dpi=CHART_DPI)


STEADY_COLOR = "#1f77b4"
AB_COLOR = "#9ecae1"
INVALID_FACE = "#d9d9d9"
INVALID_EDGE = "#7f7f7f"


def _common_concurrency(entries: Sequence[Entry]) -> int | None:
    """The concurrency most bars share (ties: the higher), named once in the title."""
    counts: dict[int, int] = {}
    for entry in entries:
        c = entry.concurrency
        if c is not None:
            counts[c] = counts.get(c, 0) + 1
    return max(counts, key=lambda c: (counts[c], c)) if counts else None


def _bar_label(entry: Entry, common_c: int | None) -> str:
    """Y tick label: the name, the concurrency when it differs from the title's, the worker count."""
    parts = []
    c = entry.concurrency
    if c != common_c:
        parts.append(f"c={c}")
    processes = entry.processes
    if processes and processes > 1:
        parts.append(f"×{int(processes)} proc")
    return entry.name + (f" ({', '.join(parts)})" if parts else "")


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
        fmt(value),
        va="center",
        ha="right" if inside else "left",
        fontsize=8,
        color="white" if inside and dark_bar else "#222222",
    )


def _plot_rps(run: Run, path: Path) -> bool:
    """Steady and ab rps per scenario against ideal, ab cap, harness ceiling and tutorial figure."""
    entries = main_entries(run)
    keys = ("steady_rps", "rps", "ideal_rps", "ab_cap_rps", "tutorial_rps")
    if not any(getattr(e, k) is not None for e in entries for k in keys):
        return False
    calibration = run.calibration
    ceiling = calibration.steady_rps if calibration else None
    figure = bench_figure(width=11, height=2.6 + 0.62 * len(entries))
    ax = figure.add_subplot()
    values = [v for e in entries for k in keys if (v := getattr(e, k)) is not None]
    x_max = max([*values, ceiling or 0.0, 1.0]) * 1.22
    for i, entry in enumerate(entries):
        _rps_row(ax, i, entry, x_max=x_max)
    if ceiling is not None:
        ax.axvline(ceiling, color="#2ca02c", linestyle=":", linewidth=2)
    common_c = _common_concurrency(entries)
    ax.set_yticks(range(len(entries)), labels=[_bar_label(e, common_c) for e in entries])
    ax.invert_yaxis()
    ax.set_xlim(0, x_max)
    ax.set_xlabel("requests per second")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    delay = run.settings.delay if run.settings is not None else None
    if delay is None:  # each scenario at its own default: name the delay if they share one
        delays = {e.delay for e in entries}
        delay = delays.pop() if len(delays) == 1 else None
    ax.set_title(f"Throughput, {_chart_concurrency_label(common_c)}, delay {fmt(delay, digits=2)} s "
                 f"(run {run.run_id or '?'})")  # fmt: skip
    handles = _rps_legend(ceiling)
    figure.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    save_bench_chart(figure, path)
    return True


def _rps_row(ax: Any, i: int, entry: Entry, *, x_max: float) -> None:
    """One scenario's row: its steady and ab bars, the ideal and ab-cap lines, the tutorial's
    star, and a word where the run failed or is invalid."""
    height = 0.36
    state = status(entry)[0]
    bad = state != "ok"
    steady, ab = entry.steady_rps, entry.rps
    markers = [v for k in ("ideal_rps", "ab_cap_rps", "tutorial_rps") if (v := getattr(entry, k))]
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
    lines: tuple[tuple[str, Literal["-", "--"], str], ...] = (
        ("ideal_rps", "-", "black"),
        ("ab_cap_rps", "--", "#d62728"),
    )
    for key, style, color in lines:
        value = getattr(entry, key)
        if value is not None:
            ax.vlines(value, i - 0.46, i + 0.46, colors=color, linestyles=style, linewidth=1.8)
    tutorial = entry.tutorial_rps
    if tutorial is not None:
        ax.plot([tutorial], [i], marker="*", markersize=13, color="#ff7f0e",
                markeredgecolor="black", markeredgewidth=0.6, linestyle="none")  # fmt: skip
    if state == "error" and steady is None and ab is None:
        ax.text(x_max * 0.01, i, "error: could not run (see Why)", va="center", ha="left",
                fontsize=9, fontweight="bold", color="#b00020")  # fmt: skip
    elif bad:
        ax.text(x_max * 0.995, i, "invalid", va="center", ha="right", fontsize=9,
                fontweight="bold", color="#b00020")  # fmt: skip


def _rps_legend(ceiling: float | None) -> list[Any]:
    """The throughput chart's legend, the harness ceiling where there was a calibration."""
    handles = [
        Patch(color=STEADY_COLOR, label="steady rps (c / mean latency; steady runs only)"),
        Patch(color=AB_COLOR, label="ab's own rps"),
        Line2D([], [], color="black", linewidth=1.8, label="ideal (c / delay)"),
        Line2D(
            [], [], color="#d62728", linestyle="--", linewidth=1.8, label="ab cap n/((n/c+1)·delay)"
        ),
        Line2D(
            [],
            [],
            marker="*",
            markersize=12,
            color="#ff7f0e",
            markeredgecolor="black",
            linestyle="none",
            label="tutorial's published rps",
        ),
        Patch(facecolor=INVALID_FACE, edgecolor=INVALID_EDGE, hatch="///", label="invalid run"),
    ]
    if ceiling is not None:
        handles.insert(4, Line2D([], [], color="#2ca02c", linestyle=":", linewidth=2,
                                 label=f"harness ceiling (calibration {fmt(ceiling)})"))  # fmt: skip
    return handles


def _plot_threads(run: Run, path: Path) -> bool:
    """Threads before the load and at its peak: how each server turns concurrency into threads."""
    entries = main_entries(run)
    if not any(
        getattr(e, k) is not None for e in entries for k in ("threads_before", "threads_peak")
    ):
        return False
    figure = bench_figure(width=10, height=2.3 + 0.55 * len(entries))
    ax = figure.add_subplot()
    peaks = [getattr(e, k) or 0.0 for e in entries for k in ("threads_before", "threads_peak")]
    x_max = max([*peaks, 1.0]) * 1.15
    height = 0.38
    for i, entry in enumerate(entries):
        bad = status(entry)[0] != "ok"
        bars = ((-height / 2, "threads_before", "#c7c7c7"), (height / 2, "threads_peak", "#8c564b"))
        for offset, key, color in bars:
            value = getattr(entry, key)
            if value is None:
                continue
            ax.barh(i + offset, value, height, color=INVALID_FACE if bad else color,
                    hatch="///" if bad else None, edgecolor=INVALID_EDGE if bad else "none")  # fmt: skip
            ax.text(
                value + x_max * 0.005, i + offset, fmt(getattr(entry, key)), va="center", fontsize=8
            )
        if status(entry)[0] == "error" and entry.threads_peak is None:
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
    save_bench_chart(figure, path)
    return True


def _sweep_series(run: Run, key: str) -> dict[str, list[tuple[int, float, bool]]]:
    """Per scenario name: (concurrency, value, is_bad) points sorted by concurrency."""
    series: dict[str, list[tuple[int, float, bool]]] = {}
    for entry in run.scenarios:
        c, value = entry.concurrency, getattr(entry, key)
        if value is None:
            continue
        bad = status(entry)[0] != "ok"
        series.setdefault(entry.name, []).append((c, value, bad))
    return {name: sorted(points) for name, points in series.items()}


def _plot_sweep(run: Run, path: Path, *, key: str, ylabel: str, title: str) -> bool:
    """One line per scenario against concurrency; invalid points are crossed out."""
    series = _sweep_series(run, key)
    if not series:
        return False
    figure = bench_figure(width=11, height=6)
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
    handles, _labels = ax.get_legend_handles_labels()
    if key == "steady_rps":
        # The ideal per concurrency from the entries themselves: a scale run picks a delay
        # per concurrency, so c / delay is not one straight line.
        ideal = {e.concurrency: e.ideal_rps for e in run.scenarios if e.ideal_rps}
        if ideal:
            cs = sorted(ideal)
            line = ax.plot(cs, [ideal[c] for c in cs], color="black", linestyle="--",
                           linewidth=1.2, label="ideal (c / delay)")  # fmt: skip
            handles.append(line[0])
        calibration = run.calibration
        if calibration:
            c, ceiling = calibration.concurrency, calibration.steady_rps
            if ceiling is not None:
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
    ax.set_title(f"{title} (run {run.run_id or '?'})")
    figure.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    save_bench_chart(figure, path)
    return True


def write_charts(run: Run, run_dir: Path) -> list[str]:
    """Write every comparison chart that has data; return their file names in report order."""
    written = []
    if _plot_rps(run, run_dir / "rps.png"):
        written.append("rps.png")
    if _plot_threads(run, run_dir / "threads.png"):
        written.append("threads.png")
    if _plot_latency(run, run_dir / "latency.png"):
        written.append("latency.png")
    if is_sweep(run):
        sweeps = (
            (
                "sweep_rps.png",
                "steady_rps",
                "steady requests per second",
                "Steady requests/s vs concurrency",
            ),
            ("sweep_threads.png", "threads_peak", "peak threads", "Peak threads vs concurrency"),
            ("sweep_rss.png", "rss_peak_mb", "peak RSS (MB)", "Peak RSS vs concurrency"),
            ("sweep_efficiency.png", "efficiency", "steady / ideal", "Efficiency vs concurrency"),
            (
                "sweep_rss_per_request.png",
                "rss_per_request_kb",
                "kB per in-flight request",
                "Memory per in-flight request vs concurrency",
            ),
        )
        for file_name, key, ylabel, title in sweeps:
            if _plot_sweep(run, run_dir / file_name, key=key, ylabel=ylabel, title=title):
                written.append(file_name)
    return written


def _plot_latency(run: Run, path: Path) -> bool:
    """Every request's response time, per entry, as a cumulative distribution: a serialising
    server's staircase and a concurrent one's vertical line at the delay read at a glance."""
    entries = [e for e in run.entries() if e.latency_distribution_ms]
    if not entries:
        return False
    figure = bench_figure(width=WIDTH_IN, height=5.2)
    ax = figure.add_subplot()
    styles = ("-", "--", "-.", ":")
    for index, entry in enumerate(entries):
        points = sorted(entry.latency_distribution_ms)
        ax.plot(
            [ms for _, ms in points],
            [p for p, _ in points],
            marker=".",
            drawstyle="steps-post",
            linestyle=styles[(index // 10) % len(styles)],
            color=f"C{index % 10}",
            label=f"{entry.name} (c={entry.concurrency})",
        )
    values = [ms for e in entries for _, ms in e.latency_distribution_ms if ms > 0]
    if values and max(values) / max(min(values), 1) >= 20:
        ax.set_xscale("log")
    ax.set_xlabel("response time (ms, every request)")
    ax.set_ylabel("% of requests at or below")
    ax.set_ylim(0, 101)
    ax.grid(alpha=0.3)
    ax.set_title(f"Response time distribution (run {run.run_id or '?'})")
    figure.legend(loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    save_bench_chart(figure, path)
    return True


def timeline_name(entry: Entry) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"timeline-{entry.name}-c{entry.concurrency}") + ".png"


def _plot_timeline(entry: Entry, path: Path) -> bool:
    """Threads, RSS and CPU against time through the load, side by side."""
    if len(entry.samples) < 2:
        return False
    t = [s.t for s in entry.samples]
    figure = bench_figure(width=WIDTH_IN, height=2.6)
    panels = (
        ("threads", "OS threads", "#8c564b"),
        ("rss_mb", "RSS (MB)", "#1f77b4"),
        ("cpu_pct", "CPU (%, 100 = one core)", "#d62728"),
    )
    for i, (attr, ylabel, color) in enumerate(panels, start=1):
        ax = figure.add_subplot(1, 3, i)
        values = [getattr(s, attr) for s in entry.samples]
        ax.plot(
            t,
            values,
            color=color,
            linewidth=1.5,
            drawstyle="steps-post" if attr == "threads" else "default",
        )
        ax.set_xlabel("s into the load")
        ax.set_ylabel(ylabel)
        # From zero, with headroom, so a flat line is visibly flat and not the frame's edge.
        ax.set_ylim(0, max(max(values) * 1.15, 1.0))
        if attr == "threads":
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    figure.suptitle(
        f"{entry.name} (c={entry.concurrency}): what top -H shows through the run", fontsize=10
    )
    save_bench_chart(figure, path)
    return True


def write_timelines(run: Run, run_dir: Path) -> list[tuple[str, str]]:
    """One timeline per entry with samples; (file name, alt text) in report order."""
    written = []
    for entry in run.entries():
        name = timeline_name(entry)
        if _plot_timeline(entry, run_dir / name):
            written.append(
                (
                    name,
                    f"Threads, RSS and CPU of {entry.name} at c={entry.concurrency} "
                    "against time through the load",
                )
            )
    return written

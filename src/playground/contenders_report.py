"""The contenders' comparison: one table and one chart from a run's results.json.

The question it answers: for this app, at the tutorial's load and at the top of the scale
sweep (10,000 in flight), which serving mode holds the most requests per MB and serves the
most requests per CPU-second, and which ones quietly serialise?

Three plain functions, each usable on its own:

- :func:`rows`: results dict -> one :class:`Row` per contender (and per tutorial scenario the
  run also holds), at its default load and at the highest concurrency it was measured at;
- :func:`markdown`: rows -> a Markdown section (the table, the answer, how each column is
  computed);
- :func:`chart`: rows -> a PNG (requests held per MB, requests per CPU-second).

:func:`write_section` writes both next to a run's report (``contenders.md``,
``contenders.png``). Every figure comes from the runner's entry keys (rps, steady_rps, delay,
concurrency, rss_peak_mb, cpu_ms_per_request, ...); nothing is estimated beyond the two
quotients said below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from playground import contenders  # noqa: F401  (registers the contenders' default loads)
from playground.scenarios import REGISTRY

KINDS = ("contender", "scenario")
# A server that serves about one sleeping request at a time, whatever the clients do (the
# same line the companion demos are judged by).
SERIALISED_AT_ONCE = 1.5
MARKDOWN_NAME, CHART_NAME = "contenders.md", "contenders.png"
# PNG metadata that would otherwise embed the matplotlib version.
_PNG_METADATA = {"Software": None}


@dataclass(frozen=True)
class Row:
    name: str
    title: str
    kind: str
    concurrency: int
    delay: float
    rps: float | None
    steady_rps: float | None
    efficiency: float | None
    threads_peak: int | None
    processes: int | None
    rss_peak_mb: float | None
    rss_per_request_kb: float | None
    cpu_ms_per_request: float | None
    cpu_seconds: float | None
    valid: bool

    @property
    def at_once(self) -> float | None:
        """Sleeping requests served at once: the tool's requests/s x delay. A server that
        serialises runs at 1 / delay whatever the clients do, so this reads about 1."""
        return None if self.rps is None or not self.delay else self.rps * self.delay

    @property
    def held(self) -> float | None:
        """Requests in flight at once by Little's law, steady requests/s x delay. Holds only
        while the run is steady; steady rps leaves out ab's ramp-up and last partial wave."""
        rate = self.steady_rps if self.steady_rps is not None else self.rps
        return None if rate is None or not self.delay else rate * self.delay

    @property
    def held_per_mb(self) -> float | None:
        """Requests held at once per MB of the app's peak resident memory (all processes)."""
        held = self.held
        return None if held is None or not self.rss_peak_mb else held / self.rss_peak_mb

    @property
    def requests_per_cpu_s(self) -> float | None:
        """Requests served per CPU-second the app used (the inverse of CPU per request)."""
        return None if not self.cpu_ms_per_request else 1000 / self.cpu_ms_per_request

    @property
    def shape(self) -> str:
        """"serialised", "concurrent" (at least half of c at once) or "partly concurrent"."""
        at_once = self.at_once
        if at_once is None:
            return "-"
        if at_once <= SERIALISED_AT_ONCE:
            return "serialised"
        return "concurrent" if at_once >= 0.5 * self.concurrency else "partly concurrent"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    number = _num(value)
    return None if number is None else int(number)


def _row(entry: dict[str, Any]) -> Row | None:
    concurrency, delay = _int(entry.get("concurrency")), _num(entry.get("delay"))
    if not isinstance(entry.get("name"), str) or concurrency is None or delay is None:
        return None
    return Row(
        name=entry["name"], title=str(entry.get("title") or entry["name"]),
        kind=str(entry.get("kind") or ""), concurrency=concurrency, delay=delay,
        rps=_num(entry.get("rps")), steady_rps=_num(entry.get("steady_rps")),
        efficiency=_num(entry.get("efficiency")), threads_peak=_int(entry.get("threads_peak")),
        processes=_int(entry.get("processes")), rss_peak_mb=_num(entry.get("rss_peak_mb")),
        rss_per_request_kb=_num(entry.get("rss_per_request_kb")),
        cpu_ms_per_request=_num(entry.get("cpu_ms_per_request")),
        cpu_seconds=_num(entry.get("cpu_seconds")),
        valid=entry.get("valid") is True and not entry.get("error"),
    )


def rows(results: dict[str, Any]) -> list[Row]:
    """The contenders (and any tutorial scenario in the same run), each at its default load and
    at the highest concurrency it was measured at, ordered by load then name."""
    entries = results.get("scenarios") if isinstance(results, dict) else None
    by_name: dict[str, list[Row]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("kind") in KINDS and (row := _row(entry)):
            by_name.setdefault(row.name, []).append(row)
    chosen: list[Row] = []
    for name, measured in by_name.items():
        target = REGISTRY.get(name)
        default = [r for r in measured if target and r.concurrency == target.concurrency]
        top = max(measured, key=lambda r: r.concurrency)
        picked = default[-1:] + ([top] if top not in default[-1:] else [])
        chosen.extend(picked)
    return sorted(chosen, key=lambda r: (r.concurrency, r.name))


def _best(candidates: list[Row], key) -> Row | None:
    scored = [r for r in candidates if key(r) is not None]
    return max(scored, key=key) if scored else None


def answer(table: list[Row]) -> list[str]:
    """One sentence per load: the most requests held per MB and per CPU-second, and who
    serialised. Only valid, measured rows compete."""
    lines = []
    for c in sorted({r.concurrency for r in table}):
        at_c = [r for r in table if r.concurrency == c and r.valid]
        serialised = [r.name for r in table if r.concurrency == c and r.shape == "serialised"]
        competing = [r for r in at_c if r.shape != "serialised"]
        per_mb, per_cpu = _best(competing, lambda r: r.held_per_mb), _best(
            competing, lambda r: r.requests_per_cpu_s)
        parts = []
        if per_mb:
            parts.append(f"most requests held per MB: {per_mb.name} ({per_mb.held_per_mb:.2f})")
        if per_cpu:
            parts.append(f"most requests per CPU-second: {per_cpu.name} "
                         f"({per_cpu.requests_per_cpu_s:.0f})")
        parts.append("serialised: " + (", ".join(serialised) if serialised else "none"))
        lines.append(f"c={c}: " + "; ".join(parts))
    return lines


HEADERS = ("mode", "c", "req/s", "efficiency", "at once", "shape", "threads peak", "processes",
           "RSS peak MB", "KB per request", "CPU ms/request", "held per MB", "req per CPU-s",
           "valid")


def _fmt(value: float | int | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def _cells(r: Row) -> list[str]:
    return [r.name, str(r.concurrency), _fmt(r.rps), _fmt(r.efficiency, 2), _fmt(r.at_once),
            r.shape, _fmt(r.threads_peak), _fmt(r.processes), _fmt(r.rss_peak_mb),
            _fmt(r.rss_per_request_kb), _fmt(r.cpu_ms_per_request, 2), _fmt(r.held_per_mb, 2),
            _fmt(r.requests_per_cpu_s, 0), "yes" if r.valid else "NO"]


def markdown(table: list[Row]) -> str:
    """The contenders' section: the table, the answer per load, and what the columns mean."""
    if not table:
        return ""
    lines = ["## The 2026 contenders", "",
             "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in table]
    lines += ["", *[f"- {line}" for line in answer(table)], "",
              "*at once*: requests/s x delay (about 1 for a server that serialises). *held per "
              "MB*: steady requests/s x delay (requests in flight by Little's law, valid only "
              "while the run is steady) over the app's peak RSS, all its processes. *req per "
              "CPU-s*: 1000 / CPU ms per request. Invalid rows (failed requests, non-2xx, a "
              "saturated load generator) are shown but do not compete.", ""]
    return "\n".join(lines)


def chart(table: list[Row], path: Path) -> Path | None:
    """Two bar panels, requests held per MB and requests per CPU-second, one bar per row
    (mode @ c); serialised rows in red, invalid rows hatched. None when nothing was measured."""
    plotted = [r for r in table if r.held_per_mb is not None or r.requests_per_cpu_s is not None]
    if not plotted:
        return None
    labels = [f"{r.name} @ c={r.concurrency}" for r in plotted]
    colours = ["tab:red" if r.shape == "serialised" else
               "tab:green" if r.kind == "contender" else "tab:grey" for r in plotted]
    hatches = ["" if r.valid else "//" for r in plotted]
    figure = Figure(figsize=(11, 0.45 * len(plotted) + 1.8))
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, 2, sharey=True)
    for ax, values, title in (
            (axes[0], [r.held_per_mb or 0 for r in plotted], "requests held per MB of RSS"),
            (axes[1], [r.requests_per_cpu_s or 0 for r in plotted], "requests per CPU-second")):
        bars = ax.barh(range(len(plotted)), values, color=colours)
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(plotted)), labels)
    axes[0].invert_yaxis()
    figure.suptitle("The 2026 contenders (red: serialised; hatched: invalid run)")
    figure.tight_layout()
    figure.savefig(path, format="png", metadata=_PNG_METADATA)
    return path


def write_section(*, run_dir: Path, results: dict[str, Any]) -> list[Path]:
    """Write ``contenders.md`` (and ``contenders.png``) into a run's folder; nothing when the
    run has no contender."""
    table = rows(results)
    if not any(r.kind == "contender" for r in table):
        return []
    run_dir = Path(run_dir)
    png = chart(table, run_dir / CHART_NAME)
    text = markdown(table) + (f"\n![contenders]({CHART_NAME})\n" if png else "")
    md = run_dir / MARKDOWN_NAME
    md.write_text(text, encoding="utf-8", newline="\n")
    return [p for p in (png, md) if p is not None]

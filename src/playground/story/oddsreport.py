"""A prediction's odds in its report: each target's probabilities over its draws, and the map of
P(collapse) over arrival rate x incident delay with its chart (`playground predict`,
:mod:`playground.incident.oddsresults`). Everything shown is read from the stored run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from playground.core.charting import new_figure, save_png
from playground.incident import held
from playground.incident.oddsresults import (
    MapPoint,
    OddsMap,
    recovery_text,
    share_range,
    threshold_text,
)
from playground.incident.storyresults import StoryRun
from playground.report.document import Block, BulletList, Heading, Image, Paragraph, Table

MAP_CHART = "story-odds-map.png"
#: The contours drawn: P(collapse) of 10 %, 50 % and 90 %.
LEVELS = (0.1, 0.5, 0.9)
#: Measured points at one rate closer than this share of the delay axis share one label block.
NEAR_DELAY = 0.05
COLUMNS = ("target", "draws", "P(held)", "P(collapsed, recovered)", "P(not recovered)")


def odds_blocks(run: StoryRun) -> list[Block]:
    """The targets' probabilities: a table of k of n with Wilson's interval, then per target
    its recovery times and what the answer turns on."""
    drawn = [t for t in run.targets if t.odds is not None and t.odds.draws]
    if not drawn:
        return []
    rows, notes = [], []
    for t in drawn:
        o = t.odds
        assert o is not None
        how = {
            "pinned": "pinned share",
            "shares": f"shares from {share_range(o.measured_shares)}"
            + ("" if o.shares_run is None else f" of run {o.shares_run}"),
            "seeds": "system seeds",
        }[o.drawn_by]
        rows.append(
            [
                t.name,
                f"{len(o.draws)} ({how})",
                *(o.frequency(w).text() for w in (held.HELD, held.COLLAPSED, held.NOT_RECOVERED)),
            ]
        )
        notes.append(f"{t.name}: {recovery_text(o)}.")
        if (sentence := threshold_text(o)) is not None:
            notes.append(f"{t.name} {sentence}.")
    return [
        Heading(2, "How often, over the draws"),
        Paragraph(
            "Each draw is one simulated repeat: the same arrivals (the run's seed), a system "
            "seed of its own and, for a gthread pool, the busiest worker's share of new "
            "connections drawn from the measured ones (playground.predict.measured). k of n "
            "draws with the 95 % Wilson interval; the per-second rows and charts below are "
            "one representative draw's (the most frequent verdict, median visits served)."
        ),
        Table(COLUMNS, rows),
        BulletList(notes),
    ]


def map_blocks(run: StoryRun, chart: str | None) -> list[Block]:
    m = run.odds_map
    if m is None:
        return []
    filled = sum(not c.simulated for c in m.cells)
    points = (
        "; ".join(
            f"{p.rate:g}/s at {p.delay:g} s: collapsed {p.collapsed} of {p.runs} "
            f"({', '.join(p.run_ids)})"
            for p in m.measured
        )
        or "none found in the results directory with these settings"
    )
    blocks: list[Block] = [
        Heading(2, f"Where {m.target} collapses: P(collapse) over rate and delay"),
        Paragraph(
            f"{len(m.rates)} x {len(m.delays)} cells, {m.draws_per_cell} draws each, the "
            f"incident {m.incident_s:g} s long and {m.after_s:g} s simulated after it (every "
            f"visit begun during it has ended by then). {filled} of {len(m.cells)} cells were "
            "filled by monotonicity, not simulated: past a cell that collapsed in every draw, "
            "or below one that never did, at the same delay. Little's law's capacity: rate = "
            f"{m.pool} / delay."
        ),
        Paragraph(f"Measured runs: {points}."),
    ]
    if chart is not None:
        blocks.append(Image(chart, f"{m.target}: P(collapse) over arrival rate and delay"))
    return blocks


def _mark_filled(ax: Any, m: OddsMap) -> None:
    """A small x on each cell filled by monotonicity rather than simulated."""
    filled = [c for c in m.cells if not c.simulated]
    if filled:
        ax.scatter(
            [c.rate for c in filled],
            [c.delay for c in filled],
            marker="x",
            color="black",
            alpha=0.45,
            s=14,
            linewidths=0.8,
            label="not simulated: filled by monotonicity",
        )


def point_groups(points: list[MapPoint], *, span: float) -> list[list[MapPoint]]:
    """The measured points in groups whose labels would meet: at the same rate, each within
    :data:`NEAR_DELAY` of the delay axis' `span` of the next; every other point alone."""
    groups: list[list[MapPoint]] = []
    for p in sorted(points, key=lambda q: (q.rate, q.delay)):
        last = groups[-1][-1] if groups else None
        if last is not None and last.rate == p.rate and p.delay - last.delay < NEAR_DELAY * span:
            groups[-1].append(p)
        else:
            groups.append([p])
    return groups


def _label_group(ax: Axes, group: list[MapPoint]) -> None:
    """A point's k/n beside it; a group's in one block, each line naming its delay, the
    highest delay first, beside the group's middle."""
    if len(group) == 1:
        (p,) = group
        ax.annotate(
            f"{p.collapsed}/{p.runs}",
            (p.rate, p.delay),
            textcoords="offset points",
            xytext=(6, 6),
            fontsize=9,
        )
        return
    lines = [f"{p.delay:g} s: {p.collapsed}/{p.runs}" for p in reversed(group)]
    middle = (group[0].delay + group[-1].delay) / 2
    ax.annotate(
        "\n".join(lines),
        (group[0].rate, middle),
        textcoords="offset points",
        xytext=(10, 0),
        va="center",
        fontsize=8,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "alpha": 0.8, "linewidth": 0},
    )


def map_figure(m: OddsMap) -> Figure:
    """P(collapse) shaded with its 10/50/90 % contours, Little's law's capacity as a line and
    the measured runs as points marked k/n."""
    fig = new_figure(figsize=(9, 6.5))
    ax = fig.subplots()
    grid = [[c.p for c in m.cells if c.delay == d] for d in m.delays]
    if len(m.rates) > 1 and len(m.delays) > 1:
        shade = ax.pcolormesh(
            m.rates, m.delays, grid, shading="nearest", cmap="RdYlGn_r", vmin=0, vmax=1
        )
        fig.colorbar(shade, ax=ax, label="P(collapse) over the draws")
        lines = ax.contour(m.rates, m.delays, grid, levels=LEVELS, colors="black", linewidths=1)
        ax.clabel(lines, fmt=lambda v: f"{100 * v:.0f} %", fontsize=8)
    else:
        ax.scatter(
            [c.rate for c in m.cells],
            [c.delay for c in m.cells],
            c=[c.p for c in m.cells],
            cmap="RdYlGn_r",
            vmin=0,
            vmax=1,
        )
    _mark_filled(ax, m)
    top = max(m.delays)
    low = min(m.delays)
    ys = [low + (top - low) * k / 50 for k in range(51)]
    ax.plot(
        [m.pool / y for y in ys],
        ys,
        color="tab:blue",
        linewidth=2,
        label=f"Little's law: rate = {m.pool} / delay",
    )
    for p in m.measured:
        ax.scatter([p.rate], [p.delay], color="white", edgecolor="black", s=60, zorder=3)
    for group in point_groups(m.measured, span=top - low):
        _label_group(ax, group)
    if not m.measured:
        ax.text(
            0.02, 0.02, "no measured runs with these settings", transform=ax.transAxes, fontsize=9
        )
    ax.set_xlim(min(m.rates), max(m.rates))
    ax.set_ylim(low, top)
    ax.set_xlabel("arrival rate (visits/s)")
    ax.set_ylabel("the third party's delay during the incident (s)")
    # Below the axes: inside, it would hide a corner of the map, where a remedy's edge can be.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=8)
    ax.set_title(
        f"{m.target}: P(collapse), {m.draws_per_cell} draws a cell; points: measured, collapsed k/n",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def plot_map(m: OddsMap, path: Path) -> None:
    """The map's chart (:func:`map_figure`) written as a PNG."""
    save_png(map_figure(m), path, dpi=100)

"""The calibration plot of docs/predict.md: at each scored setting, the model's P(collapse)
against the frequency measured over repeats made after the model's commit, each with its 95 %
interval (the measured one Wilson's over the repeats, the model's over its draws alone).

A calibrated model puts every point on the diagonal; the band around it is the page's target,
within 0.15 of the measured frequency. The points come from :func:`.edgescore.points`, the same
that write the page's score table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from playground.core.charting import new_figure, save_png
from playground.incident.edgescore import TARGET, Point


def _errors(value: float, interval: tuple[float, float]) -> list[list[float]]:
    low, high = interval
    return [[value - low], [high - value]]


#: Points closer than this on both axes share one list of labels, so none is drawn over another.
NEAR = 0.1
#: A stack of more labels than this in the upper right is written in the lower right instead.
TALL = 3
#: Where such a stack's first line hangs from, on the measured axis.
TALL_AT = 0.45
#: Points with a P under LEFT sit at the left edge; their labels rise above those of the
#: bottom row further along.
LEFT = 0.2
#: Labels of points on the bottom row further along each rise a line (LINE points) above the
#: one to their left, so that one running left does not cross one running right.
LINE = 11


@dataclass
class Place:
    """Where one or more near points' labels are written: the first point's place."""

    names: list[str]
    color: str  # the one point's colour; black where points share the place

    def add(self, name: str) -> None:
        self.names.append(name)
        self.color = "black"


def _labels(
    scored: Sequence[Point], colors: Sequence[str] = ()
) -> dict[tuple[float, float], Place]:
    """One place per group of labels on the plot: settings that fall on or near the same point
    share the first one's, each with the model's P, so that none is written over another; a
    place of one point's label in that point's colour (`colors`, one per point), a shared one
    in black."""
    out: dict[tuple[float, float], Place] = {}
    for i, x in enumerate(scored):
        measured = x.setting.collapsed
        here = (round(x.p, 3), round(measured.share, 3))
        where = next(
            (k for k in out if abs(k[0] - here[0]) < NEAR and abs(k[1] - here[1]) < NEAR), here
        )
        name = f"{x.setting.label}: {measured.k} of {measured.n}, P {x.p:.2f}"
        if where in out:
            out[where].add(name)
        else:
            out[where] = Place([name], colors[i] if i < len(colors) else "black")
    return out


def plot_calibration(scored: Sequence[Point], path: Path) -> None:
    """Predicted against measured, one point per setting, written as a PNG."""
    save_png(figure(scored), path, dpi=100)


def _write_labels(ax: Axes, labels: dict[tuple[float, float], Place]) -> None:
    """Each place's labels beside its point, pointing inward, none over another, in the
    place's colour."""
    bottom = sorted(p for p, share in labels if share < NEAR and p >= LEFT)
    for (p, share), place in labels.items():
        names = place.names
        right, low = p > 0.5, share < 0.5  # labels point inward, so none runs off the axes
        # A stack at the left edge starts higher, leaving a line below it for a point further
        # along the bottom, whose label runs towards it; those further along step up a line.
        rise = 6
        if low and p < LEFT:
            rise += LINE * len(bottom)
        elif p in bottom:
            rise += LINE * bottom.index(p)
        # In the upper half, a label further along a row of points steps down a line for each
        # point to its left, so that it passes under their labels rather than over them.
        row = sorted(q for q, other in labels if not low and abs(other - share) < NEAR)
        drop = -6 - LINE * row.index(p) if row else -6
        if right and not low and len(names) > TALL:
            # A tall stack in the upper right would run down over the labels below it: it is
            # written in the lower right, where no calibrated point falls, under its point
            # and joined to it by a line.
            ax.plot([p, p], [share, TALL_AT], color="tab:gray", linewidth=0.8)
            ax.text(
                p, TALL_AT, "\n".join(names), ha="right", va="top", fontsize=7,
                color=place.color,
            )  # fmt: skip
            continue
        ax.annotate(
            "\n".join(names),
            (p, share),
            textcoords="offset points",
            xytext=(-8 if right else 8, rise if low else drop),
            ha="right" if right else "left",
            va="bottom" if low else "top",
            fontsize=7,
            color=place.color,
        )


def figure(scored: Sequence[Point]) -> Figure:
    """The calibration plot: predicted against measured, one point per setting."""
    fig = new_figure(figsize=(7.0, 7.0))
    ax = fig.subplots()
    ax.fill_between(
        [0, 1],
        [-TARGET, 1 - TARGET],
        [TARGET, 1 + TARGET],
        color="tab:green",
        alpha=0.12,
        label=f"within {TARGET:.2f} (the target)",
    )
    ax.plot([0, 1], [0, 1], color="tab:gray", linewidth=1, label="calibrated")
    colors = []
    for x in scored:
        measured = x.setting.collapsed
        bars = ax.errorbar(
            x.p,
            measured.share,
            xerr=_errors(x.p, x.draws.interval),
            yerr=_errors(measured.share, measured.interval),
            fmt="o",
            capsize=3,
        )
        colors.append(bars[0].get_color())
    _write_labels(ax, _labels(scored, colors))
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("the model's P(collapse) (its draws' 95 % interval)")
    ax.set_ylabel("collapsed, measured (Wilson's 95 % interval)")
    ax.set_title("The model against repeats measured after its commit", fontsize=10)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(loc="center right", fontsize=8)
    fig.tight_layout()
    return fig

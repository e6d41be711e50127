"""Every chart is drawn and saved one way: on a figure of its own, never pyplot's global state,
and written without the metadata that names the matplotlib version, so the same data gives the
same PNG bytes (a re-rendered run, a recorded one in the tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: PNG metadata that would otherwise embed the matplotlib version; dropping it keeps files reproducible.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def new_figure(
    *,
    figsize: tuple[float, float],
    dpi: float = 100,
    layout: Literal["constrained", "tight"] | None = None,
) -> Figure:
    """A figure detached from pyplot's global state, with its own Agg canvas."""
    figure = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(figure)
    return figure


def save_png(figure: Figure, path: Path, *, dpi: float) -> None:
    """The figure as a PNG whose bytes depend only on what it shows."""
    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    figure.savefig(path, format="png", dpi=dpi, metadata=PNG_METADATA)

"""What the chart tests read of a drawn figure: its first axes' texts, and which overlap."""

from __future__ import annotations

from matplotlib.figure import Figure


def texts(fig: Figure) -> list[str]:
    """The texts written on the figure's first axes."""
    return [t.get_text() for t in fig.axes[0].texts]


def overlapping(fig: Figure) -> list[tuple[str, str]]:
    """Each pair of texts on the figure's first axes whose boxes on the canvas overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.axes[0].texts]
    return [
        (a, b)
        for i, (a, box) in enumerate(boxes)
        for b, other in boxes[i + 1 :]
        if box.overlaps(other)
    ]

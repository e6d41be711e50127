"""How an unknown figure and a share read in every report and table, written once for every
kind of run.

Two dashes, because each report has always printed its own and a report redrawn from its
results file must read the same, byte for byte: the story's report, the incident's findings
and the run records print a hyphen (:data:`DASH`), the bench's and the faults' reports an em
dash (:data:`EM_DASH`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

#: An unknown figure in the story's report, the incident's findings and the run records.
DASH = "-"
#: An unknown figure in the bench's and the faults' reports.
EM_DASH = "—"


def percent(share: float | None, *, digits: int = 0, dash: str = DASH) -> str:
    """A share (0.25) as a percent (`25%`), to `digits` decimals; `dash` where it is unknown."""
    return dash if share is None else f"{100 * share:.{digits}f}%"


def num(value: float | int | None, digits: int = 1, unit: str = "") -> str:
    """A float to `digits` decimals, an int as it is, with its unit; a dash for none."""
    if value is None:
        return DASH
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def median_range(values: Sequence[float], digits: int = 2) -> str:
    """Values as their median and (range), to `digits` decimals: `0.70 (0.65-0.74)`; a dash
    for none."""
    if not values:
        return DASH
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )

"""How the story's figures read in the report's table cells: numbers, shares, arrows, verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from playground.incident.storyresults import StoryRun, StoryTarget
from playground.incident.targetresults import StorySummary
from playground.incident.verdict import held, word
from playground.story import findings

DASH = "-"


def num(value: float | int | None, digits: int = 1, unit: str = "") -> str:
    """A float to `digits` decimals, an int as it is, with its unit; a dash for none."""
    if value is None:
        return DASH
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def pct(share: float | None) -> str:
    return DASH if share is None else f"{100 * share:.0f}%"


def ms(seconds: float | None) -> str:
    return DASH if seconds is None else f"{1000 * seconds:.0f} ms"


def took(seconds: float | None) -> str:
    """How long something took: in ms below a second (a 503 in 1 ms is not one in 0.00 s)."""
    if seconds is None:
        return DASH
    return ms(seconds) if seconds < 1 else f"{seconds:.2f} s"


def arrow(values: Sequence[float | None]) -> str:
    """Before → during → after."""
    return " → ".join(num(v, 0) for v in values)


def goodput(s: StorySummary) -> str:
    """Goodput before → during → after the incident."""
    return arrow([s.goodput_before, s.goodput_during, s.goodput_after])


def error(why: str | None, width: int = 80) -> str:
    return "error: " + (why or "?")[:width]


def verdict(t: StoryTarget) -> str:
    """The target's verdict cell: held or collapsed, and whether its figures can be trusted."""
    if t.error:
        return error(t.error)
    says = word(held(t))
    if not findings.trusted(t):
        return f"{says} (INVALID run: not a headline)"
    return says


def recovery(t: StoryTarget, after_s: float) -> str:
    if t.summary is None:
        return DASH
    if t.summary.recovery_s is None:
        return f"not within the run (> {after_s:g} s)"
    return f"{t.summary.recovery_s:.0f} s"


def label(t: StoryTarget, run: StoryRun) -> str:
    """The target's name, and which repeat where there are several."""
    return f"{t.name} #{t.repeat}" if run.repeat > 1 else t.name

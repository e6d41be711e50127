"""How the story's figures read in the report's table cells: numbers, shares, arrows, verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.notation import DASH, num
from playground.core.odds import Frequency
from playground.incident.held import COLLAPSED, HELD, NOT_RECOVERED, was_held, word
from playground.incident.storyresults import RecoveryTimes, StoryRun, StoryTarget, TargetSpread
from playground.incident.targetresults import StorySummary
from playground.story import findings


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
    says = word(was_held(t))
    if not findings.trusted(t):
        return f"{says} (INVALID run: not a headline)"
    return says


def once(t: StoryTarget) -> str:
    """A target measured once: its one-word verdict and, where it can be trusted, 1 of 1 with
    its interval (one run says little on its own)."""
    says = verdict(t)
    if t.error or not findings.trusted(t) or was_held(t) is None:
        return says
    return f"{says}, {Frequency(1, 1).text()}"


#: The three verdicts over repeats, in the order the report's columns and the terminal give them.
OUTCOMES = (
    (HELD, "held"),
    (COLLAPSED, "collapsed and recovered within the run"),
    (NOT_RECOVERED, "collapsed and did not recover"),
)


def often(f: Frequency | None) -> str:
    """k of n with its interval; a dash where no repeat had a verdict."""
    return DASH if f is None else f.text()


def recovery_times(r: RecoveryTimes | None) -> str:
    """The Kaplan-Meier median and the range; a repeat that did not recover is over the run's
    after-phase, never left out."""
    if r is None or r.repeats == 0:
        return DASH
    over = f"over {r.censored_at_s:g} s"
    if r.min_s is None:
        return f"{over} in all {r.repeats} (none recovered within the run)"
    median = over if r.median_s is None else f"{r.median_s:.0f} s"
    if r.recovered < r.repeats or r.max_s is None:
        return f"median {median} ({r.min_s:.0f} s to {over})"
    return f"median {median} ({r.min_s:.0f}-{r.max_s:.0f} s)"


def odds(sp: TargetSpread) -> str:
    """A repeated target's verdicts in a line: each way k of n, and the time to recover."""
    ways = ", ".join(f"{name} {often(sp.frequency(o))}" for o, name in OUTCOMES)
    left_out = f" ({sp.repeats - sp.trusted} of {sp.repeats} not trusted, left out)"
    return (
        f"{ways}; time to recover {recovery_times(sp.recovery)}"
        f"{left_out if sp.trusted < sp.repeats else ''}"
    )


def recovery(t: StoryTarget, after_s: float) -> str:
    if t.summary is None:
        return DASH
    if t.summary.recovery_s is None:
        return f"not within the run (> {after_s:g} s)"
    return f"{t.summary.recovery_s:.0f} s"


def label(t: StoryTarget, run: StoryRun) -> str:
    """The target's name, and which repeat where there are several."""
    return f"{t.name} #{t.repeat}" if run.repeat > 1 else t.name

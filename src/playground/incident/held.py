"""The incident's rule on one target: held or collapsed, recovered or not.

Written once (:func:`served_enough`), for a measured run (:mod:`playground.story.findings`
adds the checks that say whether a measurement can be trusted) and for the model's prediction
(:mod:`playground.predict`) alike. The bench's verdicts, and the thresholds several kinds read,
are in :mod:`playground.core.verdicts`; the bench's diagnoses in
:mod:`playground.bench.diagnosis`.
"""

from __future__ import annotations

from playground.core.notation import DASH, percent
from playground.core.results import Finding

# The verdict's three words, as held.HELD and the rest everywhere they are read.
from playground.incident.oddsresults import COLLAPSED as COLLAPSED
from playground.incident.oddsresults import HELD as HELD
from playground.incident.oddsresults import NOT_RECOVERED as NOT_RECOVERED
from playground.incident.storyresults import NO_OUTCOME, StoryTarget, SweepStep

#: A target *held* through the incident when at least this share of the visits that arrived
#: during it were served (first attempt or a reload). On this 2-core machine (docs/story.md,
#: runs of 2026-11-23) the gevent targets and uWSGI's pool at 2 s served 100%, the pools that
#: collapsed 46-87%.
HELD_SHARE = 0.95

ERROR = "error"
WARNING = "warning"
INFO = "info"


def incident(target: StoryTarget) -> list[Finding]:
    """Held or collapsed, recovered or not: what the incident did to this target."""
    s = target.summary
    if s is None:
        return []
    out: list[Finding] = []
    served = s.visits_served_during
    figures = {
        "visits_served_during": served,
        "goodput_during": s.goodput_during,
        "arrivals_during": s.arrivals_during,
        "held_share": HELD_SHARE,
    }
    if served is not None and served_enough(served):
        out.append(
            Finding(
                code="held",
                severity=INFO,
                message=f"held: {percent(served)} of the visits during the incident were served",
                figures=figures,
            )
        )
    elif served is not None:
        out.append(
            Finding(
                code="collapsed",
                severity=WARNING,
                message=f"collapsed: only {percent(served)} of the visits during the incident were "
                f"served (held means at least {percent(HELD_SHARE)})",
                figures=figures,
            )
        )
    if s.recovery_s is not None:
        out.append(
            Finding(
                code="recovered",
                severity=INFO,
                message=f"recovered {s.recovery_s:.0f} s after the third party did",
                figures={"recovery_s": s.recovery_s},
            )
        )
    else:
        out.append(
            Finding(
                code="not-recovered",
                severity=WARNING,
                message="did not recover within the run after the third party did",
                figures={"recovery_s": None},
            )
        )
    return out


def was_held(target: StoryTarget) -> bool | None:
    """The verdict the report headlines: True held, False collapsed, None not measured."""
    codes = {f.code for f in target.findings}
    if "held" in codes:
        return True
    if "collapsed" in codes:
        return False
    return None


def word(verdict: bool | None) -> str:
    """How the report writes a verdict: held, collapsed, or a dash for none."""
    return {True: "held", False: "collapsed", None: DASH}[verdict]


#: A sweep step whose goodput fell below HELD_SHARE of the visits offered.
FELL = "fell"


def served_enough(served: float) -> bool:
    """The one rule: the incident was held where at least HELD_SHARE of its visits were served."""
    return served >= HELD_SHARE


def outcome(served: float | None, recovery_s: float | None) -> str:
    """The verdict in three words: held, collapsed (and recovered within the run), or
    collapsed and did not recover; `-` with no visits during the incident."""
    if served is None:
        return NO_OUTCOME
    if served_enough(served):
        return HELD
    return COLLAPSED if recovery_s is not None else NOT_RECOVERED


def step_outcome(step: SweepStep) -> str:
    """A sweep step's verdict by the same rule (:func:`served_enough`), on its rates: held
    where its goodput was enough of what was offered (the rule that finds a pool's edge), else
    fell; a step offered nothing held."""
    if step.offered_per_s <= 0:
        return HELD
    return HELD if served_enough(step.goodput_per_s / step.offered_per_s) else FELL


def lasted(target: StoryTarget) -> float | None:
    """Seconds from the incident's start to the first second with a user giving up in it;
    None: nobody gave up during it."""
    if target.incident is None:
        return None
    start, end = target.incident.start, target.incident.start + target.incident.seconds
    first = next((r.t for r in target.seconds if start <= r.t < end and r.timeouts), None)
    return None if first is None else max(0.0, first - start)

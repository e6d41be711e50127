"""A target measured several times (`playground story --repeat N`): the spread of its
headline figures over the repeats whose figures can be trusted, and whether its verdict held.

One run on a shared 2-core machine can mislead (a thread pool's goodput during the incident
was 29/s in one run and 41/s in another), so each headline figure is reported as the median
with its min-max, and a target that held in some repeats and collapsed in others says so:
its verdict is not settled by these runs: it says how often each way. A repeat whose load generator did not keep its
schedule is left out of the spread (it is no headline), and the spread says how many were.

How often each verdict came out is counted over the trusted repeats as k of n with its 95 %
interval (:class:`playground.core.odds.Frequency`), never as one word; the time to recover is a
distribution whose median counts a repeat that did not recover as censored, not as missing.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from playground.core.odds import Frequency
from playground.core.results import Finding
from playground.core.survival import km_median
from playground.incident.held import (
    COLLAPSED,
    HELD,
    NOT_RECOVERED,
    WARNING,
    outcome,
    was_held,
    word,
)
from playground.incident.storyresults import (
    NO_OUTCOME,
    FigureSpread,
    RecoveryTimes,
    StoryTarget,
    TargetSpread,
)
from playground.story.findings import trusted

#: The StorySummary fields a spread is kept for: the report's headline figures.
HEADLINE = (
    "goodput_before",
    "goodput_during",
    "goodput_after",
    "visits_served_during",
    "recovery_s",
    "amplification",
    "user_latency_p99_during",
    "timeouts",
)


def _figure(name: str, measured: Sequence[StoryTarget]) -> FigureSpread:
    values = [getattr(t.summary, name) if t.summary else None for t in measured]
    known = [float(v) for v in values if v is not None]
    return FigureSpread(
        name=name,
        median=statistics.median(known) if known else None,
        min=min(known) if known else None,
        max=max(known) if known else None,
        values=[None if v is None else float(v) for v in values],
    )


def recovery_times(measured: Sequence[StoryTarget], *, after_s: float) -> RecoveryTimes | None:
    """Time to recover over the repeats, one that did not recover within the run censored at
    the run's after-phase: it took longer than that, by how much is not known."""
    times = [t.summary.recovery_s for t in measured if t.summary is not None]
    if not times:
        return None
    seen = [r for r in times if r is not None]
    return RecoveryTimes(
        repeats=len(times),
        recovered=len(seen),
        censored_at_s=after_s,
        median_s=km_median([(after_s, False) if r is None else (r, True) for r in times]),
        min_s=min(seen, default=None),
        max_s=max(seen, default=None),
    )


def _split(sp: TargetSpread) -> list[Finding]:
    """Held in some trusted repeats and collapsed in others: k of n each way."""
    held_, collapsed = sp.frequency(HELD), sp.frequency(COLLAPSED, NOT_RECOVERED)
    if held_ is None or collapsed is None or not held_.k or not collapsed.k:
        return []
    return [
        Finding(
            code="verdict-split",
            severity=WARNING,
            message=f"held in {held_.text()} trusted repeats and collapsed in "
            f"{collapsed.text()}: these runs do not settle its verdict",
            figures={"held": held_.k, "collapsed": collapsed.k, "repeats": held_.n},
        )
    ]


def spread(name: str, repeats: Sequence[StoryTarget], *, after_s: float) -> TargetSpread:
    """The spread of one target's repeats (all of them named `name`); `after_s`: the run's
    after-phase, where a repeat that did not recover is censored."""
    good = [t for t in repeats if trusted(t) and t.summary is not None]
    # A repeat with figures but no verdict (withheld: a node lost under it) counts neither way.
    judged = [t for t in good if was_held(t) is not None]
    has_verdict = {id(t) for t in judged}
    sp = TargetSpread(
        name=name,
        repeats=len(repeats),
        trusted=len(good),
        verdicts=[word(was_held(t)) for t in good],
        outcomes=[
            outcome(s.visits_served_during, s.recovery_s) if id(t) in has_verdict else NO_OUTCOME
            for t in good
            if (s := t.summary)
        ],
        recovery=recovery_times(judged, after_s=after_s),
        figures=[_figure(f, good) for f in HEADLINE],
    )
    sp.findings = _split(sp)
    if len(good) < len(repeats):
        sp.findings.append(
            Finding(
                code="repeats-left-out",
                severity=WARNING,
                message=f"{len(repeats) - len(good)} of {len(repeats)} repeats left out of "
                "the spread: an error, or a load generator that did not keep its schedule",
                figures={"left_out": len(repeats) - len(good)},
            )
        )
    return sp


def spreads(targets: Sequence[StoryTarget], *, after_s: float) -> list[TargetSpread]:
    """A spread per target name, in the order the targets were first measured."""
    names = list(dict.fromkeys(t.name for t in targets))
    return [spread(n, [t for t in targets if t.name == n], after_s=after_s) for n in names]


def settled(measured: Sequence[StoryTarget], *, minimum: int) -> Frequency | None:
    """How often a target collapsed over its trusted repeats, once there are at least
    `minimum` of them and the 95 % interval of that frequency lies wholly above or below a half
    (`playground story --repeat N --settle M`); None while it does not. A repeat with no
    verdict (not measured, or not trusted) counts neither way."""
    verdicts = [v for t in measured if trusted(t) and (v := was_held(t)) is not None]
    if len(verdicts) < minimum or not verdicts:
        return None
    collapsed = Frequency(sum(1 for v in verdicts if not v), len(verdicts))
    low, high = collapsed.interval
    return collapsed if low > 0.5 or high < 0.5 else None

"""A target measured several times (`playground story --repeat N`): the spread of its
headline figures over the repeats whose figures can be trusted, and whether its verdict held.

One run on a shared 2-core machine can mislead (a thread pool's goodput during the incident
was 29/s in one run and 41/s in another), so each headline figure is reported as the median
with its min-max, and a target that held in some repeats and collapsed in others says so:
its verdict is not settled by these runs. A repeat whose load generator did not keep its
schedule is left out of the spread (it is no headline), and the spread says how many were.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from playground.core.results import Finding
from playground.incident.storyresults import FigureSpread, StoryTarget, TargetSpread
from playground.incident.verdict import WARNING, held, word
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


def spread(name: str, repeats: Sequence[StoryTarget]) -> TargetSpread:
    """The spread of one target's repeats (all of them named `name`)."""
    good = [t for t in repeats if trusted(t) and t.summary is not None]
    verdicts = [word(held(t)) for t in good]
    found: list[Finding] = []
    if "held" in verdicts and "collapsed" in verdicts:
        found.append(
            Finding(
                code="verdict-split",
                severity=WARNING,
                message=f"held in {verdicts.count('held')} of {len(verdicts)} trusted repeats "
                f"and collapsed in {verdicts.count('collapsed')}: these runs do not settle "
                "its verdict",
                figures={"verdicts": verdicts},
            )
        )
    if len(good) < len(repeats):
        found.append(
            Finding(
                code="repeats-left-out",
                severity=WARNING,
                message=f"{len(repeats) - len(good)} of {len(repeats)} repeats left out of "
                "the spread: an error, or a load generator that did not keep its schedule",
                figures={"left_out": len(repeats) - len(good)},
            )
        )
    return TargetSpread(
        name=name,
        repeats=len(repeats),
        trusted=len(good),
        verdicts=verdicts,
        figures=[_figure(f, good) for f in HEADLINE],
        findings=found,
    )


def spreads(targets: Sequence[StoryTarget]) -> list[TargetSpread]:
    """A spread per target name, in the order the targets were first measured."""
    names = list(dict.fromkeys(t.name for t in targets))
    return [spread(n, [t for t in targets if t.name == n]) for n in names]

"""How long until: the median of times that were not all seen to end, by Kaplan and Meier.

A repeat that did not recover within the run still says something: it took longer than the
time the run watched after the incident. Dropping it would make a target that often stays down
look quick to recover; counting it as the watch's length would make it look quicker than it
was. The Kaplan-Meier estimate keeps it as *censored*: at risk up to the time it was last seen,
then no longer counted (Kaplan and Meier, "Nonparametric estimation from incomplete
observations", JASA 1958).

The median is the smallest time at which the estimated share still waiting falls to one half or
below (the convention of R's `survival` without its midpoint rule, and of lifelines'
`median_survival_time_`); where fewer than half were seen to end it does not exist, and all
that can be said is "over" the longest time watched.
"""

from __future__ import annotations

from collections.abc import Sequence

#: One observation: (seconds, ended). ended False: still waiting when watching stopped, after
#: that many seconds (censored).
Observation = tuple[float, bool]


def still_waiting(observations: Sequence[Observation]) -> list[tuple[float, float]]:
    """The Kaplan-Meier estimate: at each time something ended, (that time, the share still
    waiting just after it). At a time where some ended and some were censored, the censored are
    counted at risk (they were seen to last that long)."""
    share, out = 1.0, []
    for t in sorted({s for s, ended in observations if ended}):
        at_risk = sum(1 for s, _ in observations if s >= t)
        ended_now = sum(1 for s, ended in observations if ended and s == t)
        share *= 1 - ended_now / at_risk
        out.append((t, share))
    return out


def km_median(observations: Sequence[Observation]) -> float | None:
    """The Kaplan-Meier median: the first time the share still waiting is at most one half;
    None where it never falls that far (fewer than half were seen to end)."""
    return next((t for t, share in still_waiting(observations) if share <= 0.5 + 1e-12), None)

"""How a fault fills in what it captured (the typed model is the core's :mod:`playground.faults.results`):
the checks every fault makes after it, in one place."""

from __future__ import annotations

from collections.abc import Sequence

from playground.faults.analysis import stuck_verdict, timeline
from playground.faults.containers import check_problems
from playground.faults.probe import Outcome
from playground.faults.results import Aftermath, Burst, ContainerCheck


def aftermath(
    outcomes: Sequence[Outcome],
    *,
    bursts: tuple[Burst, Burst],
    stuck: tuple[bool, str],
    problems: list[str],
    notes: list[str],
    containers: dict[str, ContainerCheck] | None = None,
) -> Aftermath:
    """From the prober's outcomes, the bursts before and after, and the stuck verdict
    (``containers``: an overload keeps each target's own)."""
    return Aftermath(
        burst_before=bursts[0],
        burst_after=bursts[1],
        stuck=stuck[0],
        stuck_reason=stuck[1],
        containers=containers,
        timeline=timeline(outcomes),
        problems=problems,
        notes=notes,
    )


def judged(
    outcomes: Sequence[Outcome],
    before: Burst,
    after: Burst,
    containers: dict[str, ContainerCheck],
    problems: list[str],
    notes: list[str],
) -> Aftermath:
    """The stuck verdict from the bursts; the problems found so far, then stuck workers and
    the containers' own problems."""
    stuck, reason = stuck_verdict(before=before, after=after)
    found = [*problems, *([reason] if stuck else []), *check_problems(containers)]
    return aftermath(
        outcomes, bursts=(before, after), stuck=(stuck, reason), problems=found, notes=notes
    )

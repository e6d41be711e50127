"""The parts of a story run, in their order: the incident (or the closed loop), then the sweep,
the cliff and the cross-check where asked, each into the same run."""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.target import Target
from playground.incident.settings import SweepSettings
from playground.story.cliffrun import run_cliff
from playground.story.crosscheckrun import run_crosscheck
from playground.story.run import RunInProgress, run_story
from playground.story.sweeprun import run_sweep


@dataclass(frozen=True)
class Parts:
    """Which parts a run makes, as its options asked."""

    incident: bool = True
    closed_loop: bool = False
    sweep: SweepSettings | None = None
    #: The third party's delay for the cliff; no cliff without it.
    cliff_delay: float | None = None
    #: The cross-check's delay and duration; no cross-check without them.
    cross_check: tuple[float, float] | None = None

    @property
    def later(self) -> bool:
        """A part follows the incident's measurements."""
        return (
            self.sweep is not None or self.cliff_delay is not None or self.cross_check is not None
        )


def measure(story: RunInProgress, targets: list[Target], parts: Parts) -> None:
    """The incident, then the sweep, the cliff and the cross-check where asked."""
    run_story(story, targets, incident=parts.incident, closed_loop=parts.closed_loop)
    if parts.sweep is not None:
        run_sweep(story, targets, parts.sweep)
    if parts.cliff_delay is not None:
        run_cliff(story, targets, delay=parts.cliff_delay)
    if parts.cross_check is not None:
        delay, duration = parts.cross_check
        run_crosscheck(story, targets, delay=delay, duration=duration)

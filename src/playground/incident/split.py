"""How a pool's workers split the connections before the incident, and the busiest one's share.

Gunicorn's gthread workers share one listening socket, and the kernel hands a new connection
to the worker that waited last, so the split between them is uneven and moves from run to run;
the model of the incident takes the busiest worker's share as a knob
(`playground predict --busiest-share`). Each measured repeat keeps its own split before the
incident (`StorySummary.worker_connections_before`), and :func:`connections_before` reads it
back from a stored run, also one recorded before the summary kept it.
"""

from __future__ import annotations

from collections.abc import Sequence

from playground.incident.captured import worker_split
from playground.incident.storyresults import StoryTarget

#: The split before the incident is read from this second on: the first seconds bring the
#: pool from idle to the story's load (its first connections land on whichever worker woke).
SPLIT_FROM_S = 3.0


def split_before(
    seconds: Sequence[Sequence[int] | None], *, incident_start: float
) -> list[float] | None:
    """Each worker's mean connections over the seconds from SPLIT_FROM_S to the incident's
    start (second 0 first, as :func:`~playground.incident.captured.worker_split` reads them)."""
    return worker_split(seconds, lo=SPLIT_FROM_S, hi=incident_start)


def connections_before(target: StoryTarget) -> list[float] | None:
    """The target's split before the incident: its summary's, or for a run recorded before
    the summary kept it, the same rule on its stored seconds."""
    s = target.summary
    if s is None:
        return None
    if s.worker_connections_before is not None or target.incident is None:
        return s.worker_connections_before
    rows = [r.worker_connections for r in target.seconds]
    return split_before(rows, incident_start=target.incident.start)


def busiest_share(split: Sequence[float] | None) -> float | None:
    """The busiest worker's share of the connections its pool held: its mean over the sum of
    them all; None without a split, with one worker, or with no connections at all."""
    if not split or len(split) < 2 or sum(split) <= 0:
        return None
    return max(split) / sum(split)

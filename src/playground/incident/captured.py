"""What a run through the incident captures beside the users' attempts, as typed values: a
request in nginx's access log, a call the third party answered, what the servers showed at one
moment; and the join of the first two (the calls answered for nobody).

The story reads them from the containers (:mod:`playground.story.serverside`); the model of the
incident (:mod:`playground.predict`) writes the same records for the requests it simulates, so
both go through the same analysis (:mod:`playground.incident.analysis`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AccessRecord:
    end_wall: float
    status: int
    request_time: float
    request_id: str | None = None


@dataclass(frozen=True)
class UpstreamCall:
    """A call the third party answered, from its calls log (slow_api/app.py)."""

    request_id: str
    arrived_wall: float
    answered_wall: float


@dataclass(frozen=True)
class AppTiming:
    """A request as the app's own log saw it (flask_app/timing.py), wall clock: when its view
    began and ended in which process, and its call to the third party (None: none made)."""

    request_id: str
    pid: int
    began: float
    call_began: float | None
    call_ended: float | None
    ended: float


#: nginx writes $msec to the millisecond: an answer up to this much after nginx's end of the
#: request is the one it sent on.
MSEC_S = 0.001


def calls_for_nobody(
    calls: Sequence[UpstreamCall], access: Sequence[AccessRecord]
) -> tuple[int, int]:
    """(calls the third party answered for requests in nginx's log, those of them answered
    after nginx had already ended the request: its user had gone, or had an error, so the
    answer reached nobody). A call whose id nginx never logged is not counted."""
    ended = {r.request_id: r.end_wall for r in access if r.request_id}
    matched = [(c, ended[c.request_id]) for c in calls if c.request_id in ended]
    late = sum(1 for c, end in matched if c.answered_wall > end + MSEC_S)
    return len(matched), late


@dataclass(frozen=True)
class ServerSample:
    """What the servers showed at one moment, by the names of the per-second rows
    (:class:`~playground.incident.targetresults.StorySecond`: listen_queue, busy_cores, nginx_active,
    upstream_in_flight, threads, rss_mb, ...); a figure not read, or not this kind of
    server's, is left out."""

    monotonic: float  # the machine's monotonic clock, shared by every container
    # worker_connections is a list (one per worker); the rest are numbers.
    figures: dict[str, float | list[int]] = field(default_factory=dict)


def worker_split(
    seconds: Sequence[Sequence[int] | None], *, lo: float = 0, hi: float = float("inf")
) -> list[float] | None:
    """Each worker's mean over the seconds [lo, hi) of a run's per-second splits (second 0
    first; position i is the i-th worker by pid); None where no second had one."""
    rows = [r for t, r in enumerate(seconds) if r and lo <= t < hi]
    if not rows:
        return None
    width = max(len(r) for r in rows)
    columns = [[r[i] for r in rows if i < len(r)] for i in range(width)]
    return [round(sum(c) / len(c), 1) for c in columns]

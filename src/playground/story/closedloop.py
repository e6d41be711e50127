"""The same incident under a closed loop (ab): what ab saw before, during and after it.

ab keeps c requests in flight and sends the next one only when one has returned, so when the
third party slows down ab slows down with it: it sends fewer requests, and none of them waits
in a queue that grows. Its `-g` file gives each request's start (whole seconds of the epoch)
and total time; the rows are sorted by total time, so each request is placed by its start
alone: in the phase holding the middle of its start second (one second's resolution). The
phases cover all time, so every request ab finished lands in exactly one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from playground.load import AbRequest, LoadResult
from playground.story.analysis import percentile
from playground.storymodel import AbPhase, ClosedLoop

PHASES = ("before", "during", "after")


def summarise_ab(
    *,
    requests: Sequence[AbRequest],
    result: LoadResult,
    concurrency: int,
    incident_wall: float,
    incident_s: float,
) -> ClosedLoop:
    """ab's rows and report, split at the incident (`incident_wall`: the Unix time the control
    request was sent)."""
    t0 = min((r.start_s for r in requests), default=int(incident_wall))
    at = incident_wall - t0
    end = max(result.time_taken_s, max((r.start_s - t0 + 1 for r in requests), default=0))
    edges = (0.0, at, at + incident_s, max(end, at + incident_s))
    placed: list[list[float]] = [[], [], []]
    for r in requests:
        middle = r.start_s - t0 + 0.5
        placed[0 if middle < at else 1 if middle < at + incident_s else 2].append(r.total_ms / 1000)
    phases = [
        AbPhase(
            name=name,
            start_s=round(lo, 3),
            end_s=round(hi, 3),
            requests=len(times),
            per_s=len(times) / (hi - lo) if hi - lo >= 1 else None,
            latency_p50_s=percentile(times, 50),
            latency_max_s=max(times) if times else None,
        )
        for name, lo, hi, times in zip(PHASES, edges[:-1], edges[1:], placed, strict=True)
    ]
    problems = []
    if (phased := sum(len(times) for times in placed)) != len(requests):
        problems.append(f"{phased} requests in the phases, {len(requests)} in ab's -g file")
    if len(requests) != result.complete:
        problems.append(
            f"{len(requests)} rows in ab's -g file, ab reported {result.complete} complete"
        )
    return ClosedLoop(
        concurrency=concurrency,
        requests=len(requests),
        complete=result.complete,
        failed=result.failed,
        non_2xx=result.non_2xx,
        rps=result.rps,
        time_taken_s=result.time_taken_s,
        latency_max_s=max((r.total_ms for r in requests), default=0) / 1000 if requests else None,
        incident_at_s=round(at, 3),
        incident_s=incident_s,
        phases=phases,
        adds_up=problems,
    )

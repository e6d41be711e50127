"""The per-request timeline of an ab run (its ``-g`` file): how long the run lasted in response
times, and the distribution of those response times.

ab's ``-g`` rows are ``starttime seconds ctime dtime ttime wait``: ``seconds`` is the request's
start in whole epoch seconds and ``ttime`` its response time in ms; the rows are sorted by
``ttime``, not by time (see :func:`playground.core.tools.abrequests.steady_rps_from_ab`).

Why it matters: c / mean response time is the rate of a closed loop in a steady state. A run
that lasts only a few response times never gets there: ab's first request goes alone and a
serialising server's queue is still growing, so the early requests are quicker than the
steady ones and c / mean overstates (the serial dev server, n=10 c=5: 1.4 against the 0.98
requests/s it served). :func:`waves` is that length, the run's time over the mean response
time; :mod:`playground.bench.diagnosis` decides how many are enough. :meth:`Timeline.distribution`
keeps the response times' distribution for the report's chart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from playground.core.tools.abrequests import ab_rows

#: The percentiles kept for the latency distribution chart.
PERCENTS = (0, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 100)


@dataclass(frozen=True)
class Timeline:
    starts_s: tuple[float, ...]  # whole seconds, as ab writes them
    ttimes_ms: tuple[float, ...]

    def distribution(self) -> list[list[float]]:
        """[percent, ms] at :data:`PERCENTS` (nearest rank), for the distribution chart."""
        ordered = sorted(self.ttimes_ms)
        if not ordered:
            return []
        out = []
        for p in PERCENTS:
            rank = max(math.ceil(p / 100 * len(ordered)), 1)
            out.append([float(p), float(ordered[rank - 1])])
        return out


def waves(*, time_taken_s: float | None, mean_ms: float | None) -> float | None:
    """How many mean response times the run lasted: ab's own run time (its clock is exact;
    the file's start times are whole seconds, too coarse for a run of a few seconds) over the
    mean response time of every request in the per-request file."""
    if time_taken_s is None or mean_ms is None or mean_ms <= 0:
        return None
    return time_taken_s / (mean_ms / 1000)


def parse_timeline(tsv: str) -> Timeline | None:
    """The timeline of an ab ``-g`` file (read by :func:`playground.core.tools.abrequests.ab_rows`, the one
    parser of it); None when it has no data rows."""
    rows = ab_rows(tsv)
    if not rows:
        return None
    return Timeline(tuple(float(r.start_s) for r in rows), tuple(float(r.total_ms) for r in rows))

"""ab's per-request file (``-g``): its rows (:class:`AbRequest`), the steady rate and mean response
time they give by Little's law, the connections ab opened but never sent on, and the gaps
between connect times that tell a SYN retransmit.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from playground.core.tools.output import LoadOutputError


@dataclass(frozen=True)
class AbRequest:
    """One row of ab's ``-g`` file: a request ab finished (failed ones included, with ``-r``)."""

    start_s: int  # when it was sent, whole seconds of the Unix epoch (ab's resolution)
    total_ms: float  # ttime: connect to the answer's end, in whole milliseconds
    wait_ms: float  # wait: request written to first byte read (see ab_unwritten)
    connect_ms: float = 0.0  # ctime: connect started to connected (0 where ab kept none)


def connect_gap_ms(rows: Sequence[AbRequest]) -> float | None:
    """The widest gap between consecutive connect times, sorted: a SYN retransmit adds a whole
    second to a connect, so retransmitted connects stand apart from the rest
    (:data:`playground.core.verdicts.SYN_GAP_MS` says how far, and what was measured). None
    without rows."""
    times = sorted({r.connect_ms for r in rows})
    if not times:
        return None
    return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


def ab_rows(per_request_tsv: str) -> list[AbRequest]:
    """Every row of ab's ``-g`` file, in the file's order (ab sorts them by ``ttime``, so
    this is not the order they were sent in; see :func:`steady_rps_from_ab`)."""
    lines = [line for line in per_request_tsv.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0].split("\t")
    if not {"seconds", "ttime", "wait"} <= set(header):
        raise LoadOutputError(
            f"ab -g data has no 'seconds', 'ttime' and 'wait' columns; header: {lines[0]!r}"
        )
    sec, tt, wait = header.index("seconds"), header.index("ttime"), header.index("wait")
    ct = header.index("ctime") if "ctime" in header else None
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        try:
            rows.append(
                AbRequest(
                    start_s=int(fields[sec]),
                    total_ms=float(fields[tt]),
                    wait_ms=float(fields[wait]),
                    connect_ms=float(fields[ct]) if ct is not None else 0.0,
                )
            )
        except (IndexError, ValueError):
            raise LoadOutputError(f"ab -g data line {number} is not a request: {line!r}") from None
    return rows


def ab_unwritten(rows: Sequence[AbRequest]) -> int:
    """How many of ab's ``-g`` records are connections it never sent a request on.

    ab fills a record from the connection slot's timestamps: ``wait`` is
    ``beginread - endwrite`` and ``ttime`` is ``done - start``. For a request
    that was written both fall inside the connection's life, so ``wait <=
    ttime``. ``endwrite`` and ``beginread`` are only set by a write and a read,
    so a connection closed without either keeps the previous request's (see
    :func:`ab_requests`): its ``wait`` is the previous request's while its
    ``ttime`` is how long the server let it sit idle, and ``ctime`` is 0 (its
    connect time, ``connect - start``, is negative and clamped: ``connect`` too is set
    when writing). A record whose ``wait`` exceeds its ``ttime`` is such a
    connection. (One that the server kept longer than the previous request's
    wait is not caught; a record of a slot's first connection has no previous
    request to read, but ab's surplus connections are never a slot's first.)
    """
    return sum(row.wait_ms > row.total_ms for row in rows)


def steady_rps_from_ab(
    *, rows: Sequence[AbRequest], concurrency: int
) -> tuple[float | None, float | None]:
    """Steady-state throughput and mean response time from ab's ``-g`` file.

    Returns ``(steady_rps, mean_latency_ms)``; ``(None, None)`` when the file
    has fewer than two data rows (``rows``: :func:`ab_rows`).

    Why not just count requests per second of the file? Its columns are
    ``starttime seconds ctime dtime ttime wait``; the start time (``seconds``)
    has a resolution of one second and the rows are **not in time order**: ab
    writes the file after sorting its samples by total time (ascending
    ``ttime``; checked with a server whose first request was its slowest --
    that request is the *last* row, and the fastest, last-sent request is the
    first). End times cannot be rebuilt, so a rate cannot be read off a
    timeline.

    What the file does give precisely is every request's response time
    ``ttime`` (ms, connect included). ab is a closed loop: each of its ``c``
    connections sends its next request the moment the previous one returns
    (zero think time). Little's law for that loop -- the response-time law --
    says ``X = c / R``: with ``c`` requests always in flight, each taking ``R``
    on average, ``c`` complete every ``R`` seconds. So::

        steady_rps = concurrency / mean(ttime in seconds)

    This is the rate of the loaded phase, free of ab's start-up (its lone first
    request) and drain (the last requests, when fewer than ``c`` are left),
    which drag ab's own "Requests per second" down on short runs. Because the
    rows are sorted, the lone first request cannot be picked out and is
    averaged in with the rest; it shifts the result by at most ``1/n`` of the
    difference between its time and the others'. Requests that failed without
    an answer are in the file too (ab records them), with tiny times that
    inflate the estimate -- check ``failed`` before trusting it.
    """
    if concurrency <= 0:
        raise ValueError(f"concurrency must be positive, got {concurrency}")
    ttimes = [row.total_ms for row in rows]
    if len(ttimes) < 2:
        return None, None
    mean_ms = sum(ttimes) / len(ttimes)
    if mean_ms <= 0:
        # Every request "took" 0 ms: they failed before anything happened.
        return None, mean_ms
    return concurrency / (mean_ms / 1000.0), mean_ms

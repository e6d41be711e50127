"""How long each answer a gthread worker gives keeps it from taking a new connection.

A gthread worker's main thread accepts, hands each connection to the thread pool and, for each
answer a thread finished, runs `ThreadWorker.finish_request` and closes the connection
(Gunicorn 27.0.1: the thread pool's callback is deferred to the main thread, and
`util.close_graceful` waits on the socket for the peer's close), one at a time and under the
process's GIL, which the app's own Python holds for about 3 ms of each request. While it is at
that, a new connection that wakes both workers is taken by the other. So the more answers the
busiest worker gives a second, the smaller its share of the new connections: once the incident
is over and the third party is quick again, the busiest worker works through its backlog at
its threads' full pace and the other takes more of what arrives.

In numbers, one busy time per answer, the same for every worker: in a second where worker i
gave e_i answers it is busy a fraction u_i = busy x e_i; a new connection goes to the
busiest worker with the kernel's `preference` where both are free, to the free one where one
is, and to either alike where neither is (:func:`taken_share`). Per repeat,
:func:`busy_per_answer` fits the busy time by maximum likelihood over the seconds from the
incident on, its preference set by the share the same repeat measured before the incident at
the answers it gave then (:func:`preference`, the inverse), so the seconds before the incident
fix the preference and those after it, where the answers change, the busy time.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from playground.incident.acceptload import Bin

if TYPE_CHECKING:  # runrecords reads Mechanism, whose figures come from this module
    from playground.incident.runrecords import RunRecord

#: The busy times searched, ms per answer: 0 to 10 in steps of 0.05.
GRID_MS = tuple(round(0.05 * i, 2) for i in range(201))
#: A worker is never counted busy for the whole of a second (the fit's clamp).
MOST_BUSY = 0.95
#: Seconds needed on each side of the incident's start for a fit.
FEWEST_SECONDS = 5
#: The connections a gthread worker holds at most (Gunicorn's `worker_connections`, which
#: flask_app/gunicorn.conf.py leaves at 1000): a worker there stops accepting whatever its
#: answers, so a second in which either came near it (:data:`NEAR_FULL`) is left out.
WORKER_CONNECTIONS = 1000
NEAR_FULL = 0.95
#: The busy time shows only where the answers a second change: a fit needs
#: :data:`FEWEST_SECONDS` seconds after the start where the busiest gave this many times the
#: answers it gave a second before.
QUICKER = 1.5


def taken_share(preference: float, busy: float) -> float:
    """The busiest worker's share of new connections, busy a fraction `busy` of the time."""
    return preference * (1 - min(MOST_BUSY, busy))


def preference(share: float, busy: float) -> float:
    """The kernel's preference for the busiest worker where it is free, from the share it took
    while busy a fraction `busy` (the inverse of :func:`taken_share`), at most 1."""
    return min(1.0, share / (1 - min(MOST_BUSY, busy)))


def _log_likelihood(found: Sequence[Bin], s0: float, busy_s: float) -> float:
    total = 0.0
    for b in found:
        p = taken_share(s0, busy_s * b.busiest_ended)
        p = min(1 - 1e-9, max(1e-9, p))
        total += b.busiest * math.log(p) + (b.taken - b.busiest) * math.log(1 - p)
    return total


def _kept(found: Sequence[Bin]) -> list[Bin]:
    return [b for b in found if b.fullest < NEAR_FULL * WORKER_CONNECTIONS]


def taken_between(found: Sequence[Bin], lo: int, hi: int | None = None) -> float | None:
    """The busiest worker's share of the connections taken in the seconds [lo, hi), those
    where a worker was near its limit left out; None where none were taken."""
    seconds = [b for b in _kept(found) if lo <= b.second and (hi is None or b.second < hi)]
    taken = sum(b.taken for b in seconds)
    return round(sum(b.busiest for b in seconds) / taken, 3) if taken else None


def busy_per_answer(found: Sequence[Bin], *, start: int) -> float | None:
    """One repeat's busy time per answer, ms (on :data:`GRID_MS`): the preference from the
    seconds before `start` (the incident's), the busy time from those after, leaving out the
    seconds where a worker was near its limit; None with fewer than :data:`FEWEST_SECONDS`
    seconds before, or after it with the busiest answering :data:`QUICKER` than before."""
    kept = _kept(found)
    before = [b for b in kept if b.second < start]
    after = [b for b in kept if b.second >= start]
    taken = sum(b.taken for b in before)
    if len(before) < FEWEST_SECONDS or not taken:
        return None
    share = sum(b.busiest for b in before) / taken
    e0 = sum(b.busiest_ended for b in before) / len(before)
    if sum(b.busiest_ended >= QUICKER * e0 for b in after) < FEWEST_SECONDS:
        return None

    def fit(ms: float) -> float:
        s = ms / 1000
        return _log_likelihood(after, preference(share, s * e0), s)

    return max(GRID_MS, key=fit)


def table(found: Sequence[RunRecord], *, rate: float) -> list[str]:
    """Per trusted repeat of the fit runs `found`: its share before, its busy time per answer,
    the app's CPU per request then, and what followed; then the median busy time, said as the
    share it leaves the busiest worker at its pace before the incident (its share of `rate`
    visits a second) and at twice that, as after one."""
    lines = [
        "| run | repeat | share begun before | taken before | taken during | taken after "
        "| busy per answer, ms | the app's CPU per request before, ms | visits served during "
        "| back within |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    busy, shares = [], []
    for record in found:
        for t in record.targets:
            m = t.mechanism
            if not t.valid or m is None or m.accept_busy_ms is None:
                continue
            busy.append(m.accept_busy_ms)
            shares.append(m.busiest_share_begun_before or 0.0)
            served = "-" if t.visits_served_during is None else f"{t.visits_served_during:.0%}"
            back = "past the run" if t.recovery_s is None else f"{t.recovery_s:g} s"
            lines.append(
                f"| {record.run_id} | {t.repeat} | {m.busiest_share_begun_before} "
                f"| {_or_dash(m.accept_share_before)} | {_or_dash(m.accept_share_during)} "
                f"| {_or_dash(m.accept_share_after)} "
                f"| {m.accept_busy_ms:g} | {m.cpu_ms_per_request_before} | {served} | {back} |"
            )
    if busy:
        b, s = statistics.median(busy), statistics.median(shares)
        pace = s * rate
        s0 = preference(s, b / 1000 * pace)
        lines += [
            "",
            f"Median busy time over {len(busy)} repeats: {b:g} ms per answer "
            f"({min(busy):g}-{max(busy):g}). At a share of {s:.3f} before the incident the "
            f"busiest worker gives {pace:.0f} answers a second and the kernel would give it "
            f"{s0:.3f} of the new connections were it never busy; at twice that pace, as once "
            f"the third party is quick again, it takes {taken_share(s0, 2 * b / 1000 * pace):.3f}.",
        ]
    return lines


def _or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"

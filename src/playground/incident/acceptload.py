"""Whether the busiest worker takes fewer new connections the more it holds.

Gunicorn's gthread workers each wait on the one listening socket, and the kernel wakes the one
that waited last, so one worker takes most of the new connections (docs/predict.md). A worker
holding more connections spends longer between two waits (its main loop looks at every one it
holds each time round), so the other might win more of them as the first fills up. Read per
second from the warm-up's end to the incident's: the connections each worker holds (the server
sampler's count, queued inside the worker included) and the connections each accepted in that
second, the change in what it holds plus the requests it ended then (the app's own timing log;
nginx opens a connection per request).

The figure kept per repeat (:func:`slope`) is how the log-odds that the busiest worker takes
the next connection move per :data:`LEAD_UNIT` connections of its lead over the other (its held
less theirs, from the lead it had before the incident): a logistic regression of the seconds'
counts, fitted by Newton's method. Negative: the busier it gets, the less it takes. The unit
is a count, not a share of the pool: what a worker's loop goes through each time round is the
connections it holds.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from playground.incident.captured import AppTiming

if TYPE_CHECKING:  # runrecords reads Mechanism, whose figures this module makes
    from playground.incident.runrecords import RunRecord

#: The slope's unit of lead, in connections held.
LEAD_UNIT = 10
#: The run docs/predict.md reads the slope from: `.venv/bin/playground story gunicorn-threads
#: --incident-delay 1.6 --repeat 6 --no-build -q`, near gthread's edge, alone on the machine.
MEASURED_RUN = "20261203-215818-story"


@dataclass(frozen=True)
class Bin:
    """One second: the busiest worker's lead in connections held, and the connections taken."""

    lead: int  # the busiest worker's connections held less the other's, as the second began
    busiest: int  # connections the busiest worker accepted in the second
    taken: int  # connections both accepted in it
    second: int = 0  # the run's second
    busiest_ended: int = 0  # requests the busiest worker ended in it (its answers)
    other_ended: int = 0  # requests the other ended in it
    fullest: int = 0  # the most either held, as the second began or ended


def pair(timings: Sequence[AppTiming], *, lo: float, hi: float) -> tuple[int, int] | None:
    """The busiest process and the other by the requests begun in [lo, hi) wall clock; None
    unless exactly two began any."""
    pids = Counter(t.pid for t in timings if lo <= t.began < hi)
    if len(pids) != 2:
        return None
    (busiest, _), (other, _) = pids.most_common()
    return busiest, other


def bins(
    held: Sequence[Sequence[int] | None],
    timings: Sequence[AppTiming],
    pids: tuple[int, int],
    *,
    t0_wall: float,
    lo: int,
    hi: int,
) -> list[Bin]:
    """One per second t in [lo, hi) of the run (rows' seconds; `held`: each row's
    connections per worker, in order of pid) where both it and the next were sampled: the
    busiest of `pids` first."""
    order = sorted(pids)
    busiest, other = (order.index(p) for p in pids)
    ended = Counter((x.pid, math.floor(x.ended - t0_wall)) for x in timings)
    found = []
    for t in range(lo, min(hi, len(held) - 1)):
        now, then = held[t], held[t + 1]
        if not now or not then or len(now) != 2 or len(then) != 2:
            continue
        gave = [ended[(order[w], t)] for w in (0, 1)]
        took = [max(0, then[w] - now[w] + gave[w]) for w in (0, 1)]
        if sum(took):
            lead = now[busiest] - now[other]
            most = max(*now, *then)
            found.append(Bin(lead, took[busiest], sum(took), t, gave[busiest], gave[other], most))
    return found


def slope(found: Sequence[Bin], *, reference: float) -> float | None:
    """The log-odds' slope per :data:`LEAD_UNIT` requests of lead beyond `reference`, with an
    intercept of its own; None with too few bins or a lead that spans under two requests."""
    xs = [(b.lead - reference) / LEAD_UNIT for b in found]
    if len(found) < 5 or max(xs) - min(xs) < 2 / LEAD_UNIT:
        return None
    a, s = 0.0, 0.0
    for _ in range(50):
        ga = gs = haa = has = hss = 0.0
        for x, b in zip(xs, found, strict=True):
            p = 1 / (1 + math.exp(-(a + s * x)))
            r = b.busiest - b.taken * p
            w = b.taken * p * (1 - p)
            ga, gs = ga + r, gs + r * x
            haa, has, hss = haa + w, has + w * x, hss + w * x * x
        det = haa * hss - has * has
        if det <= 0:
            return None
        da, ds = (hss * ga - has * gs) / det, (haa * gs - has * ga) / det
        a, s = a + da, s + ds
        if abs(da) + abs(ds) < 1e-9:
            return round(s, 3)
    return None


def lead_before(found: Sequence[Bin]) -> float | None:
    """The busiest worker's mean lead in connections held over the seconds before the incident."""
    return round(sum(b.lead for b in found) / len(found), 2) if found else None


def table(record: RunRecord) -> list[str]:
    """Per trusted repeat of a run: its share before, its lead before and the largest, its
    slope, the host's steal and the visits served; then the median slope, said as a share."""
    lines = [
        "| repeat | busiest share before | its lead before | its largest lead | slope per 10 "
        "connections | the host's steal | visits served during |",
        "|---|---|---|---|---|---|---|",
    ]
    found = []
    for t in record.targets:
        m = t.mechanism
        if not t.valid or m is None or m.accept_slope is None or m.lead_before is None:
            continue
        found.append(m)
        steal = "-" if m.steal_share is None else f"{100 * m.steal_share:.1f} %"
        served = t.visits_served_during
        lines.append(
            f"| {t.repeat} | {m.busiest_share_begun_before} | {m.lead_before:g} | {m.lead_max} "
            f"| {m.accept_slope:+.3f} | {steal} | {'-' if served is None else f'{served:.0%}'} |"
        )
    if found:
        s = statistics.median(m.accept_slope or 0.0 for m in found)
        p = statistics.median(m.busiest_share_begun_before or 0.0 for m in found)
        moved = 1 / (1 + math.exp(-(math.log(p / (1 - p)) + s * 100 / LEAD_UNIT)))
        lines += [
            "",
            f"Median slope over {len(found)} repeats: {s:+.3f}: a lead 100 connections past "
            f"the lead before moves a share of {p:.3f} to {moved:.3f}.",
        ]
    return lines

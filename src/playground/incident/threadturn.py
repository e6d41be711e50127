"""How long a thread of a full uWSGI pool holds each request, beyond the delay it asked for.

While every thread of the pool is in a request and a connection waits in the kernel's queue
(uWSGI's stats server: `busy_cores` equal to `cores`, `listen_queue` above 0), a thread that
ends one request takes the next at once, so the pool ends `cores / turn` requests a second,
`turn` being a thread's whole time per request: the delay the app asked of the third party,
the call's overhead, the app's CPU and its waits for the process's GIL among 64 threads, and
uWSGI's own accept and parse between two views. The app's log gives it as a view's mean time
plus the threads' time outside any view (:func:`turn_beyond_ms`); less the incident's delay,
the time beyond it, which the model holds each thread for (:mod:`playground.predict.measured`). The app's own log cannot
give it per thread (it names the process, not the thread), and the median times a thread
holds a request inside the view (:mod:`.mechanism`) leave out what happens between two views.

Only the incident's calls count, before any user gave up: the seconds start once every call
in flight arrived during the incident (its delay and a second after its start) and end with
it or at the first second in which a user timed out, whichever comes first, and only views
that began during it are counted. Once users give up, the pool serves requests nobody waits
for and the reloads that follow, a regime of its own; what decides whether a pool tips is
what it does before.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from playground.incident.captured import AppTiming

if TYPE_CHECKING:  # runrecords reads Mechanism, whose figures come from this module
    from playground.incident.runrecords import RunRecord

#: Full seconds in a row needed for a figure: fewer, and the count's rounding dominates.
FEWEST_SECONDS = 5


def _full(row: object) -> bool:
    """The pool in the row's sample: every thread in a request and a connection queued."""
    busy, cores, queued = (getattr(row, k, None) for k in ("busy_cores", "cores", "listen_queue"))
    return bool(cores) and busy == cores and queued is not None and queued > 0


def full_seconds(rows: Sequence[object], lo: int, hi: int) -> tuple[int, int] | None:
    """The longest run of seconds [a, b) within [lo, hi) whose samples show the pool full;
    None where it is shorter than :data:`FEWEST_SECONDS`."""
    best: tuple[int, int] | None = None
    a = None
    for t in range(lo, min(hi, len(rows)) + 1):
        if t < min(hi, len(rows)) and _full(rows[t]):
            a = t if a is None else a
            continue
        if a is not None and (best is None or t - a > best[1] - best[0]):
            best = (a, t)
        a = None
    return best if best and best[1] - best[0] >= FEWEST_SECONDS else None


def turn_beyond_ms(
    timings: Sequence[AppTiming],
    rows: Sequence[object],
    *,
    t0_wall: float,
    start_s: float,
    incident_s: float,
    incident_delay: float,
) -> float | None:
    """A thread's time per request beyond the incident's delay, ms, over the longest run of
    full seconds of the incident before the first user timed out (`rows`: its per-second
    rows, second t at `t0_wall` + t); None where the pool was never full that long, or the
    rows have no uWSGI stats.

    The turn is a view's mean time plus the time between two views: the threads' time outside
    any view over those seconds (the pool's thread-seconds less the views' within them), per
    view begun in them. Counting the views that end there would give it too, but the views
    end in waves the incident's first second sets off, and a window cuts them anywhere: a
    count is off by a share of a wave, the time between two views only by its own share."""
    lo = math.ceil(start_s + incident_delay) + 1
    end = math.floor(start_s + incident_s)
    hi = next((t for t in range(lo, end) if getattr(rows[t], "timeouts", 0)), end)
    span = full_seconds(rows, lo, hi)
    if span is None:
        return None
    cores = getattr(rows[span[0]], "cores", 0)
    began, a, b = t0_wall + start_s, t0_wall + span[0], t0_wall + span[1]
    views = [t for t in timings if t.began >= began]
    inside = sum(max(0.0, min(t.ended, b) - max(t.began, a)) for t in views)
    begun = [t.ended - t.began for t in views if a <= t.began < b]
    if not begun:
        return None
    between = (cores * (b - a) - inside) / len(begun)
    return round(1000 * (sum(begun) / len(begun) + between - incident_delay), 2)


def table(found: Sequence[RunRecord], *, cpu_ms: float) -> list[str]:
    """Per trusted repeat of the fit runs `found`: its turn beyond the delay, the app's CPU per
    request before the incident and what followed; then the median turn, said as the answers
    a second it leaves the pool against `cpu_ms`, what the model held a thread for before."""
    lines = [
        "| run | delay | repeat | a thread's time per request beyond the delay, ms "
        "| the app's CPU per request before, ms | visits served during |",
        "|---|---|---|---|---|---|",
    ]
    turns, shapes = [], set()
    for record in found:
        s = record.story_settings()
        delay, pool = s.incident_delay, s.workers * s.threads
        for t in record.targets:
            m = t.mechanism
            if not t.valid or m is None or m.thread_turn_ms is None:
                continue
            turns.append(m.thread_turn_ms)
            shapes.add((delay, pool))
            served = "-" if t.visits_served_during is None else f"{t.visits_served_during:.0%}"
            lines.append(
                f"| {record.run_id} | {delay:g} s | {t.repeat} | {m.thread_turn_ms:g} "
                f"| {m.cpu_ms_per_request_before} | {served} |"
            )
    if turns and len(shapes) == 1:
        (delay, pool), turn = shapes.pop(), statistics.median(turns)
        lines += [
            "",
            f"Median over {len(turns)} repeats: {turn:g} ms ({min(turns):g}-{max(turns):g}), "
            f"where the app's CPU alone, {cpu_ms:.2f} ms, held a thread in the model: at {delay:g} "
            f"s the pool of {pool} answers {pool / (delay + turn / 1000):.2f} requests a second, "
            f"not {pool / (delay + cpu_ms / 1000):.2f}.",
        ]
    return lines

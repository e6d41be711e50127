"""How long a thread of a full pool holds each request, beyond the delay it asked for.

While every thread of the pool is in a request and a connection waits for one, a thread that
ends one request takes the next at once, so the pool ends `cores / turn` requests a second,
`turn` being a thread's whole time per request: the delay the app asked of the third party,
the call's overhead, the app's CPU and its waits for the process's GIL among 64 threads, and
whatever keeps a thread out of a view between two. The pool is full (:func:`full_seconds`):

- uWSGI's threads, from its stats server: `busy_cores` equal to `cores`, `listen_queue` above
  0; between two views, uWSGI's own accept and parse;
- Gunicorn's threads behind HAProxy, which passes the app at most one connection per thread:
  every worker holds its threads' worth of connections, at least :data:`HELD_SHARE` of them
  (a snapshot of a worker's sockets falls between its answers and the connections that
  follow them), and nginx holds more than the pool (the rest wait in
  HAProxy's queue); between two views, the hop back through HAProxy to the next connection,
  the worker's main thread that accepts and reads it, and a thread of one worker idle while
  the other worker queues a connection HAProxy handed it. Behind nginx alone one worker holds
  more than its threads and the other fewer, and no second is full. The app's log gives it as a view's mean time
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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from playground.incident.captured import AppTiming

if TYPE_CHECKING:  # runrecords reads Mechanism, whose figures come from this module
    from playground.incident.runrecords import RunRecord

#: Full seconds in a row needed for a figure: fewer, and the count's rounding dominates.
FEWEST_SECONDS = 5
#: The share of its threads a Gunicorn worker's snapshot must hold in a full second (run
#: 20261204-164746-story, behind HAProxy at 2.25 s: 60-68 held of 64 while nginx held
#: 136-238).
HELD_SHARE = 0.9


def pool_size(row: object, per_worker: int | None) -> int | None:
    """The threads of the pool in the row's sample: uWSGI's `cores`, or each Gunicorn worker's
    `per_worker`; None where neither is known."""
    cores = getattr(row, "cores", None)
    if cores:
        return int(cores)
    held = getattr(row, "worker_connections", None)
    return len(held) * per_worker if held and per_worker else None


def _full(row: object, per_worker: int | None) -> bool:
    """The pool in the row's sample: every thread in a request and a connection waiting."""
    busy, cores, queued = (getattr(row, k, None) for k in ("busy_cores", "cores", "listen_queue"))
    if cores:
        return busy == cores and queued is not None and queued > 0
    held, active = getattr(row, "worker_connections", None), getattr(row, "nginx_active", None)
    pool = pool_size(row, per_worker)
    if not held or pool is None or per_worker is None or active is None:
        return False
    return bool(min(held) >= HELD_SHARE * per_worker and active > pool)


def full_seconds(
    rows: Sequence[object], lo: int, hi: int, per_worker: int | None = None
) -> tuple[int, int] | None:
    """The longest run of seconds [a, b) within [lo, hi) whose samples show the pool full
    (`per_worker`: a Gunicorn worker's threads); None where it is shorter than
    :data:`FEWEST_SECONDS`."""
    best: tuple[int, int] | None = None
    a = None
    for t in range(lo, min(hi, len(rows)) + 1):
        if t < min(hi, len(rows)) and _full(rows[t], per_worker):
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
    per_worker: int | None = None,
) -> float | None:
    """A thread's time per request beyond the incident's delay, ms, over the longest run of
    full seconds of the incident before the first user timed out (`rows`: its per-second
    rows, second t at `t0_wall` + t; `per_worker`: a Gunicorn worker's threads); None where
    the pool was never full that long, or the rows cannot tell.

    The turn is a view's mean time plus the time between two views: the threads' time outside
    any view over those seconds (the pool's thread-seconds less the views' within them), per
    view begun in them. Counting the views that end there would give it too, but the views
    end in waves the incident's first second sets off, and a window cuts them anywhere: a
    count is off by a share of a wave, the time between two views only by its own share."""
    lo = math.ceil(start_s + incident_delay) + 1
    end = math.floor(start_s + incident_s)
    hi = next((t for t in range(lo, end) if getattr(rows[t], "timeouts", 0)), end)
    span = full_seconds(rows, lo, hi, per_worker)
    if span is None:
        return None
    cores = pool_size(rows[span[0]], per_worker) or 0
    began, a, b = t0_wall + start_s, t0_wall + span[0], t0_wall + span[1]
    views = [t for t in timings if t.began >= began]
    inside = sum(max(0.0, min(t.ended, b) - max(t.began, a)) for t in views)
    begun = [t.ended - t.began for t in views if a <= t.began < b]
    if not begun:
        return None
    between = (cores * (b - a) - inside) / len(begun)
    return round(1000 * (sum(begun) / len(begun) + between - incident_delay), 2)


def table(found: Sequence[RunRecord], *, cpu_ms: Mapping[str, float]) -> list[str]:
    """Per trusted repeat of the fit runs `found`: its turn beyond the delay, the app's CPU per
    request before the incident and what followed; then, per target, the median turn, said as
    the answers a second it leaves the pool against `cpu_ms[target]`, what the model held a
    thread for before."""
    lines = [
        "| run | target | delay | repeat | a thread's time per request beyond the delay, ms "
        "| the app's CPU per request before, ms | visits served during |",
        "|---|---|---|---|---|---|---|",
    ]
    turns: dict[str, list[float]] = {}
    shapes: dict[str, set[tuple[float, int]]] = {}
    for record in found:
        s = record.story_settings()
        for t in record.targets:
            m = t.mechanism
            if not t.valid or m is None or m.thread_turn_ms is None:
                continue
            turns.setdefault(t.name, []).append(m.thread_turn_ms)
            shapes.setdefault(t.name, set()).add((s.incident_delay, s.workers * s.threads))
            served = "-" if t.visits_served_during is None else f"{t.visits_served_during:.0%}"
            lines.append(
                f"| {record.run_id} | {t.name} | {s.incident_delay:g} s | {t.repeat} "
                f"| {m.thread_turn_ms:g} | {m.cpu_ms_per_request_before} | {served} |"
            )
    for name, values in turns.items():
        if len(shapes[name]) != 1:
            continue
        (delay, pool), turn, cpu = shapes[name].pop(), statistics.median(values), cpu_ms[name]
        lines += [
            "",
            f"{name}: median over {len(values)} repeats {turn:g} ms "
            f"({min(values):g}-{max(values):g}), where the app's CPU alone, {cpu:.2f} ms, held a "
            f"thread in the model: at {delay:g} s the pool of {pool} answers "
            f"{pool / (delay + turn / 1000):.2f} requests a second, not "
            f"{pool / (delay + cpu / 1000):.2f}.",
        ]
    return lines

"""What might decide whether a repeat of the incident collapses, read from the repeat itself.

Repeats at the same settings send the same schedule and still split between held and
collapsed. Each candidate below is one figure per repeat, measured before the incident or in
its first seconds (the onset, :data:`ONSET_S`), before any user has given up and reloaded, so
that none of them is a consequence of the collapse it is meant to predict:

- how the workers split the work: the busiest worker's share of the requests its pool began
  (from the app's own log, by process), and of the connections the workers held (the
  server sampler's per-worker count, once a second);
- how long a thread is held per request beyond the third party's own time: the app's work
  around the call, and the call's overhead (connect, name look-up, the answer's trip);
- how long a request waited for a thread: from nginx taking it to the app's view beginning;
- the app's CPU per request, the host's steal, the arrivals actually sent at the onset, the
  kernel's accept queue, nginx's connections, the generator's send lag.

The app's log (flask_app/timing.py), nginx's access log and slow_api's calls log are joined on
the request's id; all three are on the wall clock, which the containers share with the host.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from playground.core.jsonmodel import doc
from playground.incident import acceptbusy, acceptload, threadturn
from playground.incident.captured import AccessRecord, AppTiming, UpstreamCall

#: The incident's first seconds: users give up after 4 s and reload 1 s later, so until then
#: nothing that happens is the users' answer to it.
ONSET_S = 5.0
#: Before the incident, figures are read from this second on (the pool warms up first).
BEFORE_FROM_S = 5.0


@dataclass(frozen=True)
class Mechanism:
    """One repeat's candidates for what decides a collapse (docs/predict.md)."""

    busiest_share_begun_before: float | None = doc(
        "the busiest worker's share of the requests the app began before the incident"
    )
    busiest_share_begun_onset: float | None = doc(
        "... of those it began in the incident's first seconds (ONSET_S)"
    )
    busiest_share_held_onset: float | None = doc(
        "the busiest worker's share of the connections the workers held at the onset "
        "(the sampler's mean per worker)"
    )
    hold_beyond_before_ms: float | None = doc(
        "median time a thread held a request beyond the third party's own time, before, ms"
    )
    hold_beyond_onset_ms: float | None = doc("... for the requests begun at the onset, ms")
    app_work_onset_ms: float | None = doc(
        "median time in the view outside the call to the third party, at the onset, ms"
    )
    call_overhead_onset_ms: float | None = doc(
        "median call time beyond the third party's own (connect, look-up, the trip), ms"
    )
    upstream_beyond_onset_ms: float | None = doc(
        "median time the third party held a call that arrived at the onset beyond the incident's "
        "delay (slow_api's own arrived-to-answered), ms"
    )
    thread_wait_p90_before_s: float | None = doc(
        "90th percentile of the wait from nginx taking a request to the view beginning, before, s"
    )
    thread_wait_p90_onset_s: float | None = doc("... for the requests nginx took at the onset, s")
    cpu_ms_per_request_before: float | None = doc(
        "the app's CPU over its 2xx answers, before the incident, ms"
    )
    cpu_ms_per_request_onset: float | None = doc("... at the onset (answers of any status), ms")
    arrivals_onset: int | None = doc("first attempts actually sent at the onset")
    listen_queue_max_onset: int | None = doc("largest kernel accept queue seen at the onset")
    nginx_active_max_onset: int | None = doc("most connections nginx held at the onset")
    steal_share: float | None = doc("the host's steal over the run, a share of its CPU time")
    accept_slope: float | None = doc(
        "two workers: how the log-odds that the busiest takes the next connection move per "
        "10 connections of its lead in connections held, from the warm-up's end to the "
        "incident's (incident/acceptload.py); a figure for the model, not a candidate",
        omit_none=True,
    )
    lead_before: float | None = doc(
        "two workers: the busiest's mean lead in connections held over the other's, before "
        "the incident; a figure for the model, not a candidate",
        omit_none=True,
    )
    lead_max: int | None = doc(
        "two workers: the busiest's largest lead in connections held over the other's, from "
        "the warm-up's end to the incident's; a figure for the model, not a candidate",
        omit_none=True,
    )
    accept_share_before: float | None = doc(
        "two workers: the busiest's share of the connections both accepted from the warm-up's "
        "end to the incident, seconds where one held near its limit left out "
        "(incident/acceptbusy.py); a figure for the model, not a candidate",
        omit_none=True,
    )
    accept_share_during: float | None = doc(
        "two workers: the same during the incident; a figure for the model, not a candidate",
        omit_none=True,
    )
    accept_share_after: float | None = doc(
        "two workers: the same from the incident's end to the run's; a figure for the model, "
        "not a candidate",
        omit_none=True,
    )
    thread_turn_ms: float | None = doc(
        "uWSGI's pool, or Gunicorn's behind HAProxy: a thread's time per request beyond the "
        "incident's delay while every thread was busy and a connection waited, ms "
        "(incident/threadturn.py); a figure for the model, not a candidate",
        omit_none=True,
    )
    accept_busy_ms: float | None = doc(
        "two workers: how long each answer a worker gives keeps it from taking a new "
        "connection, ms, fitted over the seconds from the incident to the run's end "
        "(incident/acceptbusy.py); a figure for the model, not a candidate",
        omit_none=True,
    )


#: The figures of :class:`Mechanism` the model reads, not candidates: they span the incident.
MODEL_FIGURES = (
    "accept_slope",
    "lead_before",
    "lead_max",
    "accept_share_before",
    "accept_share_during",
    "accept_share_after",
    "accept_busy_ms",
    "thread_turn_ms",
)


def _median_ms(values: Sequence[float]) -> float | None:
    return round(1000 * statistics.median(values), 2) if values else None


def _p90(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)], 3)


def _busiest(counts: Counter[int]) -> float | None:
    total = sum(counts.values())
    if len(counts) < 2 or total == 0:
        return None
    return round(max(counts.values()) / total, 4)


def busiest_begun(timings: Sequence[AppTiming], lo: float, hi: float) -> float | None:
    """The busiest process's share of the requests the app began in [lo, hi), wall clock;
    None with fewer than two processes seen."""
    return _busiest(Counter(t.pid for t in timings if lo <= t.began < hi))


def _held_split(rows: Sequence[Sequence[int] | None], lo: int, hi: int) -> float | None:
    seen = [r for r in rows[lo:hi] if r and len(r) >= 2]
    if not seen:
        return None
    width = min(len(r) for r in seen)
    means = [sum(r[i] for r in seen) / len(seen) for i in range(width)]
    return round(max(means) / sum(means), 4) if sum(means) > 0 else None


@dataclass(frozen=True)
class Onset:
    """Where the incident and its onset sit: wall-clock instants, and rows' seconds."""

    t0_wall: float
    start_s: float

    def wall(self, seconds: float) -> float:
        return self.t0_wall + seconds


def hold_parts(
    timings: Sequence[AppTiming], calls: Sequence[UpstreamCall]
) -> list[tuple[float, float, float]]:
    """Per request that called the third party once and was answered: (began, the app's own
    work outside the call, the call's time beyond the third party's own)."""
    answered = {c.request_id: c for c in calls}
    parts = []
    for t in timings:
        c = answered.get(t.request_id)
        if c is None or t.call_began is None or t.call_ended is None:
            continue
        call = t.call_ended - t.call_began
        parts.append(
            (t.began, (t.ended - t.began) - call, call - (c.answered_wall - c.arrived_wall))
        )
    return parts


def thread_waits(
    timings: Sequence[AppTiming], access: Sequence[AccessRecord]
) -> list[tuple[float, float]]:
    """Per request in both logs: (when nginx took it, how long until the view began), s."""
    took = {r.request_id: r.end_wall - r.request_time for r in access if r.request_id}
    return [
        (took[t.request_id], t.began - took[t.request_id]) for t in timings if t.request_id in took
    ]


def candidates(
    *,
    onset: Onset,
    timings: Sequence[AppTiming],
    access: Sequence[AccessRecord],
    calls: Sequence[UpstreamCall],
    rows: Sequence[object],
    sent: Sequence[tuple[int, float]],
    steal_share: float | None,
    incident_delay: float | None = None,
    incident_s: float | None = None,
    per_worker: int | None = None,
) -> Mechanism:
    """The candidates of one repeat. `rows` are its per-second rows (StorySecond), `sent`
    each attempt's (attempt number, seconds since the generator's start it was sent),
    `incident_delay` the third party's time during the incident (None: not read),
    `incident_s` how long it lasted (None: no accept slope), `per_worker` each worker's
    threads (None: a turn only where uWSGI's stats count them)."""
    start = onset.start_s
    before = (onset.wall(BEFORE_FROM_S), onset.wall(start))
    at = (onset.wall(start), onset.wall(start + ONSET_S))

    def within(t: float, span: tuple[float, float]) -> bool:
        return span[0] <= t < span[1]

    parts = hold_parts(timings, calls)
    waits = thread_waits(timings, access)
    lo, hi = math.ceil(start), math.ceil(start + ONSET_S)
    onset_rows = list(rows[lo:hi])
    accepts = _accept_load(timings, rows, onset, incident_s=incident_s)
    before_rows = list(rows[int(BEFORE_FROM_S) : int(start)])
    return Mechanism(
        busiest_share_begun_before=busiest_begun(timings, *before),
        busiest_share_begun_onset=busiest_begun(timings, *at),
        busiest_share_held_onset=_held_split(
            [getattr(r, "worker_connections", None) for r in rows], lo, hi
        ),
        hold_beyond_before_ms=_median_ms([w + c for b, w, c in parts if within(b, before)]),
        hold_beyond_onset_ms=_median_ms([w + c for b, w, c in parts if within(b, at)]),
        app_work_onset_ms=_median_ms([w for b, w, _ in parts if within(b, at)]),
        call_overhead_onset_ms=_median_ms([c for b, _, c in parts if within(b, at)]),
        upstream_beyond_onset_ms=_upstream_beyond(calls, at, incident_delay),
        thread_wait_p90_before_s=_p90([w for t, w in waits if within(t, before)]),
        thread_wait_p90_onset_s=_p90([w for t, w in waits if within(t, at)]),
        cpu_ms_per_request_before=_cpu_per_request(before_rows, ok_only=True),
        cpu_ms_per_request_onset=_cpu_per_request(onset_rows, ok_only=False),
        arrivals_onset=sum(1 for n, s in sent if n == 1 and start <= s < start + ONSET_S),
        listen_queue_max_onset=_largest(onset_rows, "listen_queue"),
        nginx_active_max_onset=_largest(onset_rows, "nginx_active"),
        steal_share=None if steal_share is None else round(steal_share, 4),
        **accepts,
        **_thread_turn(timings, rows, onset, incident_s, incident_delay, per_worker),
    )


def _upstream_beyond(
    calls: Sequence[UpstreamCall], at: tuple[float, float], delay: float | None
) -> float | None:
    """The third party's median time beyond the delay over the calls that arrived `at` (a
    wall-clock span), ms; None where the delay is not known."""
    if delay is None:
        return None
    return _median_ms(
        [c.answered_wall - c.arrived_wall - delay for c in calls if at[0] <= c.arrived_wall < at[1]]
    )


def _thread_turn(
    timings: Sequence[AppTiming],
    rows: Sequence[object],
    onset: Onset,
    incident_s: float | None,
    delay: float | None,
    per_worker: int | None,
) -> dict[str, Any]:
    """A full pool's time per request beyond the delay (incident/threadturn.py), by
    Mechanism's name; none without the incident's length and delay."""
    if incident_s is None or delay is None:
        return {}
    return {
        "thread_turn_ms": threadturn.turn_beyond_ms(
            timings,
            rows,
            t0_wall=onset.t0_wall,
            start_s=onset.start_s,
            incident_s=incident_s,
            incident_delay=delay,
            per_worker=per_worker,
        )
    }


def _accept_load(
    timings: Sequence[AppTiming],
    rows: Sequence[object],
    onset: Onset,
    *,
    incident_s: float | None,
) -> dict[str, Any]:
    """The accept slope, the lead before the incident and the largest lead
    (incident/acceptload.py), and the busy time per answer (incident/acceptbusy.py), by
    Mechanism's names; none where there are not two workers."""
    pids = acceptload.pair(timings, lo=onset.wall(BEFORE_FROM_S), hi=onset.wall(onset.start_s))
    if incident_s is None or pids is None:
        return {}
    held = [getattr(r, "worker_connections", None) for r in rows]
    lo, start = int(BEFORE_FROM_S), math.ceil(onset.start_s)

    def seconds(hi: int) -> list[acceptload.Bin]:
        return acceptload.bins(held, timings, pids, t0_wall=onset.t0_wall, lo=lo, hi=hi)

    lead = acceptload.lead_before(seconds(start))
    if lead is None:
        return {}
    end = math.floor(onset.start_s + incident_s)
    spanned, whole = seconds(end), seconds(len(held))
    return {
        "accept_slope": acceptload.slope(spanned, reference=lead),
        "lead_before": lead,
        "lead_max": max(b.lead for b in spanned),
        "accept_share_before": acceptbusy.taken_between(whole, lo, start),
        "accept_share_during": acceptbusy.taken_between(whole, start, end),
        "accept_share_after": acceptbusy.taken_between(whole, end),
        "accept_busy_ms": acceptbusy.busy_per_answer(whole, start=start),
    }


def _largest(rows: Sequence[object], name: str) -> int | None:
    seen = [v for r in rows if (v := getattr(r, name, None)) is not None]
    return max(seen) if seen else None


def _cpu_per_request(rows: Sequence[object], *, ok_only: bool) -> float | None:
    """The app's CPU over the answers that ended in the same seconds, ms per answer."""
    cpu = [getattr(r, "cpu_pct", None) for r in rows]
    if not rows or any(c is None for c in cpu):
        return None
    answers = sum(
        getattr(r, "goodput", 0) + (0 if ok_only else getattr(r, "errors", 0)) for r in rows
    )
    if answers <= 0:
        return None
    return round(10.0 * float(sum(c for c in cpu if c is not None)) / float(answers), 3)

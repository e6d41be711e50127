"""Goodput against offered load: one step of the sweep, from the generator's rows to its figures.

Each step is a constant offered rate with the third party at a fixed delay. Its first
`warmup_s` seconds fill the servers and are not counted; the figures are over the measured
window after it, by the second each attempt was meant to be sent (offered, attempts) or
ended (goodput, timeouts, errors). A user's latency counts from the intended send of the
first attempt to the first success, refreshes included, for the visits that arrived in the
window; every visit is followed to its end (the generator waits for them).
"""

from __future__ import annotations

from collections.abc import Sequence

from playground.story.analysis import Attempt, check_adds_up, per_second, percentile, visits_from
from playground.storymodel import GeneratorCheck, SweepStep


def summarise_step(
    *,
    attempts: Sequence[Attempt],
    check: GeneratorCheck,
    rate: float,
    warmup_s: float,
    measure_s: float,
    settled_before_s: float | None = 0.0,
) -> SweepStep:
    """The figures of one step over its measured window [warmup_s, warmup_s + measure_s)."""
    end = warmup_s + measure_s
    rows = per_second(attempts, seconds=int(end) + 1)
    window = [r for r in rows if warmup_s <= r.t < end]
    n = len(window) or 1
    visits = [v for v in visits_from(attempts) if warmup_s <= v.start < end]
    latencies = [v.latency for v in visits]
    return SweepStep(
        rate=rate,
        offered_per_s=sum(r.arrivals for r in window) / n,
        attempts_per_s=sum(r.arrivals + r.refreshes for r in window) / n,
        goodput_per_s=sum(r.goodput for r in window) / n,
        timeouts=sum(r.timeouts for r in window),
        errors=sum(r.errors for r in window),
        visits=len(visits),
        visits_served=sum(v.succeeded for v in visits) / len(visits) if visits else None,
        latency_p50_s=percentile(latencies, 50),
        latency_p99_s=percentile(latencies, 99),
        check=check,
        adds_up=check_adds_up(attempts, rows),
        window_s=float(len(window)),
        settled_before_s=settled_before_s,
    )

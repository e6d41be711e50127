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
from dataclasses import asdict, dataclass

from playground.story.analysis import Attempt, check_adds_up, per_second, percentile, visits_from


@dataclass(frozen=True)
class SweepStep:
    """One offered rate of one mode, as story.json holds it (`sweep.modes[].steps[]`)."""

    rate: float  # offered visits per second (the setting)
    offered_per_s: float  # first attempts meant to be sent per second in the window
    attempts_per_s: float  # ... with the refreshes
    goodput_per_s: float  # 2xx answers per second that ended in the window
    timeouts: int  # attempts that timed out in the window
    errors: int  # attempts that ended otherwise (refused, reset, non-2xx) in the window
    visits: int  # visits that arrived in the window
    visits_served: float | None  # share of them served, refreshes included
    latency_p50_s: float | None  # user latency from the intended send
    latency_p99_s: float | None
    valid: bool  # the generator kept its schedule (its send-lag check)
    check_reasons: list[str]
    send_lag_p99_s: float | None
    adds_up: list[str]  # problems: every attempt counted once when sent and once when ended
    window_s: float  # seconds in the measured window
    # Seconds the servers took to drain (nothing waiting on the third party) before the step;
    # None: still busy when the sweep's settle time ran out (the step started anyway).
    settled_before_s: float | None = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def summarise_step(
    *, attempts: Sequence[Attempt], check: dict, rate: float, warmup_s: float, measure_s: float
) -> SweepStep:
    """The figures of one step over its measured window [warmup_s, warmup_s + measure_s)."""
    end = warmup_s + measure_s
    rows = per_second(attempts, seconds=int(end) + 1)
    window = [r for r in rows if warmup_s <= r["t"] < end]
    n = len(window) or 1

    def total(*keys: str) -> int:
        return sum(r[k] for r in window for k in keys)

    visits = [v for v in visits_from(attempts) if warmup_s <= v.start < end]
    latencies = [v.latency for v in visits]
    lag = check.get("send_lag_p99_s")
    return SweepStep(
        rate=rate,
        offered_per_s=total("arrivals") / n,
        attempts_per_s=total("arrivals", "refreshes") / n,
        goodput_per_s=total("goodput") / n,
        timeouts=total("timeouts"),
        errors=total("errors"),
        visits=len(visits),
        visits_served=sum(v.succeeded for v in visits) / len(visits) if visits else None,
        latency_p50_s=percentile(latencies, 50),
        latency_p99_s=percentile(latencies, 99),
        valid=bool(check.get("valid")),
        check_reasons=list(check.get("reasons") or []),
        send_lag_p99_s=lag if isinstance(lag, int | float) and lag == lag else None,
        adds_up=check_adds_up(attempts, rows),
        window_s=float(len(window)),
    )

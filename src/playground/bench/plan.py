"""What a bench run measures: its targets, each at the loads the run gives it."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from playground.bench.diagnosis import MIN_STEADY_ROUNDS
from playground.core.containerstate import WAIT_TIMEOUT_S
from playground.core.target import Target
from playground.core.tools.ab import ab_requests

MIN_LOAD_S = 10.0


@dataclass(frozen=True)
class Plan:
    """What to measure: targets with their load, and how."""

    targets: tuple[Target, ...]
    tool: str = "ab"
    requests: int | None = None  # None: each target's own default
    concurrency: int | None = None
    delay: float | None = None
    sweep: tuple[int, ...] = ()
    repeat: int = 1
    duration_s: float = 10.0  # wrk only
    from_host: bool = False
    calibration: bool = True
    wait_timeout_s: int = WAIT_TIMEOUT_S  # how long a scenario may take to become healthy
    # Scale runs: a folder of override files named like the scenario files (scale/), a delay
    # per concurrency, and the efficiency under which a mode has stopped scaling (its higher
    # concurrencies are then skipped: a thread-per-request server would take hours at c=10,000).
    overrides_dir: Path | None = None
    delays: tuple[tuple[int, float], ...] = ()
    stop_below: float | None = None
    # Targets swept at concurrencies of their own instead of ``sweep`` (scale's NAME@C,...).
    sweeps: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def loads(self, target: Target) -> list[Target]:
        """The target at each load this plan runs it (one per sweep concurrency)."""
        base = replace(
            self._overridden(target),
            requests=self.requests or target.requests,
            concurrency=self.concurrency or target.concurrency,
            delay=target.delay if self.delay is None else self.delay,
        )
        sweep = dict(self.sweeps).get(target.name, self.sweep)
        if not sweep:
            return [base]
        delays = dict(self.delays)
        loads = []
        for c in sweep:
            delay = delays.get(c, base.delay)
            if delays:
                # At least ~10 s of load, and enough rounds to reach a steady state (with
                # fewer the run shows no steady figure; see verdicts.MIN_STEADY_WAVES).
                waves = max(MIN_STEADY_ROUNDS, math.ceil(MIN_LOAD_S / max(delay, 0.1)))
            else:
                # A sweep keeps n/c constant (as many waves at every concurrency).
                waves = max(base.requests // base.concurrency, 1)
            # Full rounds after ab's lone first request: with n = waves x c, ab would open one
            # connection it never sends a request on, and count the server closing it idle as a
            # failed request (load.ab_requests).
            loads.append(
                replace(
                    base,
                    concurrency=c,
                    delay=delay,
                    requests=self.requests or ab_requests(rounds=waves, concurrency=c),
                )
            )
        return loads

    def _overridden(self, target: Target) -> Target:
        """The target with the override of its compose file's name from ``overrides_dir``."""
        if self.overrides_dir is None or not (self.overrides_dir / target.compose_file).exists():
            return target
        return target.at_scale(f"{self.overrides_dir.name}/{target.compose_file}")


def entry_key_of(target: Target) -> tuple[str, int]:
    """The key of the entry a load makes (:attr:`playground.core.results.Entry.key`)."""
    return (target.name, int(target.concurrency))

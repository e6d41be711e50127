"""The users' schedule, as the open-loop generator (loadgen/openloop.py) draws it.

The same algorithm with the same seeds: the same rate, arrival and seed give the same visits at
the same intended times, and the same reload waits, as the generator sends them (a unit test
holds the two together). The story runs one phase at its rate for the whole run.
"""

from __future__ import annotations

import math
import random


def arrival_times(*, rate: float, duration: float, arrival: str, seed: int) -> list[float]:
    """Every visit's intended start, s from the start of the run: evenly spaced at 1/rate
    (`constant`), or exponential gaps from a generator seeded with `seed` (`poisson`)."""
    if arrival == "constant":
        n = math.ceil(duration * rate - 1e-9)
        return [k / rate for k in range(n)]
    rng = random.Random(seed)
    times: list[float] = []
    t = rng.expovariate(rate)
    while t < duration:
        times.append(t)
        t += rng.expovariate(rate)
    return times


def refresh_wait(*, delay: float, backoff: float, seed: int, visit: int, attempt: int) -> float:
    """How long a user waits after attempt `attempt` failed before reloading: `delay`, or with
    a backoff above 1 that times backoff^(attempt-1) and a jitter seeded per visit and attempt."""
    if backoff == 1:
        return delay
    jitter = random.Random(f"{seed}:{visit}:{attempt}").uniform(0.5, 1.5)
    return float(delay * backoff ** (attempt - 1) * jitter)

"""The model's clock runs events in SimPy's order: callbacks after a delay and processes that
yield delays, many of them due at the same time, give the same sequence on both."""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from typing import Any

import pytest
import simpy

from playground.predict.clock import Clock

Schedule = Callable[..., None]


def scenario(seed: int, now: Callable[[], float], after: Schedule, start: Schedule) -> list[str]:
    """Events that schedule callbacks and processes at delays of 0, 0.5 and 1 s (so many fall
    due together), each logging its name and time."""
    rng = random.Random(seed)
    log: list[str] = []
    budget = [300]

    def process(name: str) -> Generator[float, None, None]:
        for k in range(rng.randrange(1, 4)):
            log.append(f"{name}.{k}@{now():g}")
            spawn(f"{name}.{k}")
            yield rng.choice((0.0, 0.5, 1.0))
        log.append(f"{name}.end@{now():g}")

    def callback(name: str) -> None:
        log.append(f"{name}@{now():g}")
        spawn(name)

    def spawn(name: str) -> None:
        for k in range(rng.randrange(1, 3)):
            if budget[0] <= 0:
                return
            budget[0] -= 1
            if rng.random() < 0.4:
                start(process(f"{name}/p{k}"))
            else:
                after(rng.choice((0.0, 0.5, 1.0)), callback, f"{name}/c{k}")

    for k in range(3):
        after(0.0, callback, f"root{k}")
    return log


def on_simpy(seed: int) -> list[str]:
    env = simpy.Environment()

    def after(delay: float, fn: Callable[..., None], *args: Any) -> None:
        env.timeout(delay).callbacks.append(lambda _: fn(*args))

    def start(gen: Generator[float, None, None]) -> None:
        def wrapped() -> Generator[simpy.Event, Any, None]:
            for delay in gen:
                yield env.timeout(delay)

        env.process(wrapped())

    log = scenario(seed, lambda: env.now, after, start)
    env.run()
    return log


def on_clock(seed: int) -> list[str]:
    clock = Clock()
    log = scenario(seed, lambda: clock.now, clock.after, clock.start)
    clock.run()
    return log


@pytest.mark.parametrize("seed", range(8))
def test_the_clock_runs_events_in_simpys_order(seed):
    expected = on_simpy(seed)
    assert len(expected) > 50
    assert on_clock(seed) == expected


def test_stop_leaves_what_is_still_due_unrun():
    clock = Clock()
    ran: list[float] = []

    def tick() -> None:
        ran.append(clock.now)
        if clock.now >= 2:
            clock.stop()

    for t in range(5):
        clock.after(float(t), tick)
    clock.run()
    assert ran == [0.0, 1.0, 2.0]

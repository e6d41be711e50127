"""The model's clock: a discrete-event loop with SimPy's order of events and none of its objects.

One heap of (time, priority, sequence, callback, arguments), popped in that order: SimPy's
`Environment` keeps the same key, (time, priority, event id), so a model written on either runs
the same events in the same order and gives the same figures to the last digit (a unit test
holds them equal). What the model needs of SimPy and no more: a callback after a delay (a
`Timeout` with a callback), and a process, a generator that yields the delays it waits (a
`Process`: it starts at once, before anything else due at that time, as SimPy's `Initialize`
does with its urgent priority, and each delay it yields resumes it when it has passed). It
costs a tuple per event where SimPy makes an event object, a list of callbacks and a lambda:
the model's runs take about half the time (docs/predict.md, "Speed").

`stop()` ends the run after the current event: a caller that knows its answer (a draw's
collapse verdict, decided before the run's end) leaves what is still due unrun.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Generator
from itertools import count
from typing import Any

#: SimPy's priorities: a process starts (URGENT) before what else is due at the same time.
URGENT, NORMAL = 0, 1

#: A process: a generator that yields the seconds it waits, each time it waits.
Process = Generator[float, None, Any]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, int, Callable[..., None], tuple[Any, ...]]] = []
        self._ids = count()
        self.stopped = False

    def after(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        """`fn(*args)` once `delay` seconds (at least 0) have passed."""
        heapq.heappush(self._queue, (self.now + delay, NORMAL, next(self._ids), fn, args))

    def start(self, process: Process) -> None:
        """Run `process` from now, before whatever else is due now."""
        heapq.heappush(self._queue, (self.now, URGENT, next(self._ids), self._resume, (process,)))

    def _resume(self, process: Process) -> None:
        try:
            delay = process.send(None)
        except StopIteration:
            return
        self.after(delay, self._resume, process)

    def stop(self) -> None:
        """End the run once the current event is done."""
        self.stopped = True

    def run(self) -> None:
        """Every event in order, until none is left or `stop()`."""
        queue, pop = self._queue, heapq.heappop
        while queue and not self.stopped:
            when, _, _, fn, args = pop(queue)
            self.now = when
            fn(*args)

"""The app server's queues, as each server keeps them.

- **uWSGI threads**: one kernel listen queue of `listen` connections shared by the workers; a
  thread accepts only when it is idle (the threads share a lock around accept), so the queue is
  the kernel's, first in first out, and a connection that finds it full is not accepted.
  thunder-lock (one lock around accept() for all the processes too) changes which process
  takes the next connection, not the queue: the oldest connection still goes to an idle thread
  as soon as there is one, so the model runs it as the pool as it is.
- **Gunicorn gthread**: each worker accepts while it holds fewer than `worker_connections`
  connections, whatever its threads, and queues them first in first out inside itself; which
  worker accepts is the kernel's choice (the busiest takes `busiest_preference`, the rest
  share what is left), except that each answer a worker gives keeps its main thread busy
  `accept_busy_s` (:mod:`playground.incident.acceptbusy`), and a connection the kernel gives
  the busiest worker while its main thread is busy goes to another ready worker; connections
  no worker accepts wait in the kernel's backlog.
  Behind HAProxy (`to_free_thread`) a new connection goes to a worker with a free thread
  where one has one, by the kernel's preference where both have: there the workers hold near
  even shares of the connections once the pool is full, whatever the split before
  (:data:`.measured.FREE_THREAD_RUNS`), where a fixed split would queue the busiest worker's
  surplus beside the other's free threads.
  With `reuse_port` each worker has a socket of its own, with a backlog of its own: the kernel
  hands each new connection to one socket by a hash of its addresses (uniform over the
  sockets, whatever the workers' load; a retransmitted SYN has the same addresses, so the same
  socket), and a worker accepts only from its own.
- **gevent** (either server): no pool; a greenlet per connection up to `per_worker`, the app's
  CPU under the process's one GIL.

A connection is work once accepted: nginx closing it (its user gone, or its own 504) does not
take it out of a queue; the thread that reaches it serves it (the request is already read).
"""

from __future__ import annotations

import random
from bisect import bisect
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate

from playground.predict.system import System


@dataclass
class Connection:
    """A request nginx passed on, from the moment the kernel queued its connection."""

    rid: str
    arrived: float  # when nginx took the request (X-Request-Start)
    queued: float = 0.0  # when its connection entered a queue
    started: float | None = None  # when a thread or greenlet took it
    worker: int = 0
    socket: int | None = None  # with reuse_port: the worker whose socket the hash chose
    asked: float | None = None  # the delay it asks for, where not the users' (a health check)


@dataclass
class Server:
    """Every kind's queues; `start(connection)` hands one to the app (set by the simulation)."""

    system: System
    rng: random.Random
    start: Callable[[Connection], None] = lambda c: None
    backlogs: list[deque[Connection]] = field(default_factory=list)  # the kernel's, per socket
    held: list[int] = field(default_factory=list)  # connections each worker holds
    idle: list[int] = field(default_factory=list)  # free threads or greenlets per worker
    inside: list[deque[Connection]] = field(default_factory=list)  # gthread's own FIFO
    queue_spans: list[tuple[float, float]] = field(default_factory=list)  # in the backlog
    acceptor_free: list[float] = field(default_factory=list)  # when each main thread is free

    def __post_init__(self) -> None:
        n = self.system.workers
        self.held, self.idle = [0] * n, [self.system.per_worker] * n
        self.inside = [deque() for _ in range(n)]
        self.acceptor_free = [0.0] * n
        self.backlogs = [deque() for _ in range(n if self.system.reuse_port else 1)]
        # Read once: the pick below runs for every connection of every draw.
        self._workers = range(n)
        self._gthread = self.gthread
        self._limit = self.system.worker_connections or 0
        self._busy = self.system.accept_busy_s or 0.0
        self._to_free = self.system.to_free_thread
        share = self.system.busiest_preference
        self._weights = (
            None
            if share is None
            else [share if w == 0 else (1 - share) / (n - 1) for w in self._workers]
        )

    @property
    def gthread(self) -> bool:
        return self.system.server == "Gunicorn" and self.system.model == "threads"

    def _ready(self) -> list[int]:
        """The workers that accept a new connection now: a gthread worker while it holds fewer
        than `worker_connections`, any other while it has an idle thread or greenlet."""
        if self._gthread:
            held, limit = self.held, self._limit
            return [w for w in self._workers if held[w] < limit]
        idle = self.idle
        return [w for w in self._workers if idle[w] > 0]

    def _socket(self, c: Connection) -> int:
        """The socket the connection arrives at: the one the workers share, or with reuse_port
        the one the kernel's hash picks (chosen once: a SYN sent again keeps its addresses)."""
        if not self.system.reuse_port:
            return 0
        if c.socket is None:
            c.socket = self.rng.randrange(self.system.workers)
        return c.socket

    def _pick(self, socket: int, now: float) -> int | None:
        """The worker that accepts a new connection from the socket now; None: none does."""
        ready = self._ready()
        if self.system.reuse_port:
            return socket if socket in ready else None
        if not ready:
            return None
        if self._to_free:
            ready = [w for w in ready if self.idle[w] > 0] or ready
        weights = self._weights
        if weights is None or len(ready) == 1:
            return max(ready, key=self.idle.__getitem__)
        # random.choices(ready, weights)[0] as the standard library draws it (the same one
        # random() and the same arithmetic), without its checks: the model's hottest line.
        cum = list(accumulate(weights[w] for w in ready))
        w = ready[bisect(cum, self.rng.random() * (cum[-1] + 0.0), 0, len(ready) - 1)]
        if w == 0 and self.acceptor_free[0] > now:
            # The busiest worker's main thread is at an answer: another takes the connection.
            return ready[1 + self.rng.randrange(len(ready) - 1)]  # ready is in order: 0 first
        return w

    def _take(self, c: Connection, w: int, now: float) -> None:
        c.worker = w
        self.held[w] += 1
        if self.idle[w] > 0:
            self.idle[w] -= 1
            c.started = now
            self.start(c)
        else:
            self.inside[w].append(c)

    def offer(self, c: Connection, now: float) -> bool:
        """A connection arrives; False: the kernel's queue is full (its SYN is dropped)."""
        c.queued = now
        socket = self._socket(c)
        backlog = self.backlogs[socket]
        w = self._pick(socket, now) if not backlog else None
        if w is not None:
            self._take(c, w, now)
            return True
        if len(backlog) >= self.system.listen:
            return False
        backlog.append(c)
        return True

    def finish(self, c: Connection, now: float) -> None:
        """A thread or greenlet is done with `c`: it takes the next connection."""
        w = c.worker
        self.held[w] -= 1
        self.idle[w] += 1
        if self._busy:
            self.acceptor_free[w] = max(now, self.acceptor_free[w]) + self._busy
        if self.inside[w]:
            self.idle[w] -= 1
            nxt = self.inside[w].popleft()
            nxt.started = now
            self.start(nxt)
        socket = w if self.system.reuse_port else 0
        backlog = self.backlogs[socket]
        while backlog and (taker := self._pick(socket, now)) is not None:
            waiting = backlog.popleft()
            self.queue_spans.append((waiting.queued, now))
            self._take(waiting, taker, now)

"""HAProxy between nginx and the app (the `haproxy` remedy): the server line's bounded queue.

As HAProxy 3.0's configuration manual describes its settings (story/remedies/haproxy.cfg):
at most `maxconn` requests are in flight to the app at once; the rest wait in HAProxy's queue,
first in first out, for at most `timeout queue`, then HAProxy answers 503; with `option
abortonclose` a queued request whose client (nginx) has closed its connection is dropped, and
without it the request stays queued and goes to the app all the same. A request passed on
holds its slot until the app answers it: abortonclose drops a request only "while it is still
possible", queued or connecting, and the app's thread serves what it has read whoever waits.
`maxqueue` does not bound the wait with one server: past it, HAProxy queues the request in the
backend's queue, which the same server drains in the same order (haproxy.cfg's comment), so
the model keeps one queue. The simulation (:mod:`.simulate`) runs the timers; this keeps the
count and the queue.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from playground.predict.system import HAProxy


@dataclass
class Queue:
    """HAProxy's slots to the app and its queue of requests, by request id."""

    settings: HAProxy
    in_flight: int = 0  # requests passed to the app and not yet answered
    waiting: dict[str, float] = field(default_factory=dict)  # queued, in arrival order: since

    def arrive(self, rid: str, now: float) -> bool:
        """A request from nginx: True if it goes to the app now, False if it queues."""
        limit = self.settings.maxconn
        if limit is None or self.in_flight < limit:
            self.in_flight += 1
            return True
        self.waiting[rid] = now
        return False

    def answered(self) -> str | None:
        """The app answered a request: its slot goes to the oldest queued request (returned),
        or stays free."""
        self.in_flight -= 1
        if not self.waiting:
            return None
        rid = next(iter(self.waiting))
        del self.waiting[rid]
        self.in_flight += 1
        return rid

    def expired(self, rid: str) -> bool:
        """`timeout queue` has passed since the request queued: True if it was still queued
        (it leaves the queue, and HAProxy answers 503)."""
        return self.waiting.pop(rid, None) is not None

    def closed(self, rid: str) -> bool:
        """nginx closed the request's connection (its user gone, its own 504, or the answer
        came): True if that dropped it from the queue (abortonclose)."""
        return self.settings.abort_on_close and self.waiting.pop(rid, None) is not None

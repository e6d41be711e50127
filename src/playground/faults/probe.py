"""The prober: closed-loop clients that record every request's start, end and outcome.

ab's report has no time axis, so the outages and the slowdown are watched by a small
closed-loop *prober* instead: C clients, each sending its next request as soon as the previous
one answered, every request recorded with its start, end and outcome (an HTTP status, or
``refused``, ``reset``, ``closed`` -- the connection closed without an answer -- or
``timeout``). One rule keeps an outage from turning the prober into a retry storm: a client
whose request failed waits out the rest of the nominal delay before its next one, so the
request rate stays what it was (C / delay).

A *burst* is k requests sent at once and timed: the same burst before and after a fault shows
whether workers were left stuck.
"""

from __future__ import annotations

import asyncio
import errno
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from playground.core.target import plain_decimal
from playground.faults.results import Burst


@dataclass(frozen=True)
class Outcome:
    """One probe request: when it started and ended (seconds on the fault run's clock), the
    delay it asked for, and its HTTP status or, without an answer, why not."""

    start: float
    end: float
    delay: float
    status: int | None = None
    error: str | None = None  # refused, reset, closed, timeout, garbled, or an errno name

    @property
    def kind(self) -> str:
        return str(self.status) if self.status is not None else str(self.error)

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def seconds(self) -> float:
        return self.end - self.start


def classify(exc: BaseException) -> str:
    """A short, stable name for why a request got no answer."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return "reset"
    if isinstance(exc, asyncio.IncompleteReadError | EOFError):
        return "closed"
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno].lower()
    return type(exc).__name__


async def request_once(
    *, host: str, port: int, delay: float, timeout_s: float
) -> tuple[int | None, str | None]:
    """GET /?delay=D on a fresh connection: (status, None) or (None, why there was no answer)."""
    writer = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(
                f"GET /?delay={plain_decimal(delay)} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            await writer.drain()
            line = await reader.readline()
            if not line:
                return None, "closed"
            parts = line.split()
            if len(parts) < 2 or not parts[1].isdigit():
                return None, "garbled"
            try:
                await reader.read()  # the rest of the answer, up to the server's close
            except OSError:
                pass  # the status line is the answer; a reset after it changes nothing
            return int(parts[1]), None
    except Exception as exc:
        return None, classify(exc)
    finally:
        if writer is not None:
            writer.close()


# --- the prober -------------------------------------------------------------------------------
class Prober:
    """C clients in a closed loop against host:port, on a background thread, until stopped.

    ``delay`` can be changed while it runs (the slowdown fault). Every request is recorded as
    an :class:`Outcome` on the clock ``clock`` (seconds since the fault run started).
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        concurrency: int,
        delay: float,
        timeout_s: float,
        clock: Callable[[], float],
        max_requests: int = 500_000,
    ) -> None:
        self.host, self.port = host, port
        self.concurrency = concurrency
        self.delay = delay
        self.timeout_s = timeout_s
        self.clock = clock
        self.max_requests = max_requests
        self.outcomes: list[Outcome] = []
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"prober-{port}", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._tasks = [asyncio.create_task(self._client()) for _ in range(self.concurrency)]
        self._started.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _client(self) -> None:
        while not self._stopping and len(self.outcomes) < self.max_requests:
            delay = self.delay
            start = self.clock()
            status, error = await request_once(
                host=self.host, port=self.port, delay=delay, timeout_s=self.timeout_s
            )
            outcome = Outcome(
                start=start, end=self.clock(), delay=delay, status=status, error=error
            )
            self.outcomes.append(outcome)
            if not outcome.ok and not self._stopping:
                # Pace failures to the nominal delay: an outage is not a retry storm.
                await asyncio.sleep(max(0.0, delay - outcome.seconds, 0.05))

    def __enter__(self) -> Prober:
        self._thread.start()
        self._started.wait(10)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.stop(cancel=exc_type is not None)

    def stop(self, *, cancel: bool = False) -> list[Outcome]:
        """Stop sending; let the requests in flight finish (or cancel them); the outcomes."""
        self._stopping = True
        if cancel and self._loop is not None:
            for task in self._tasks:
                self._loop.call_soon_threadsafe(task.cancel)
        self._thread.join(timeout=self.timeout_s + 10)
        return sorted(self.outcomes, key=lambda o: o.start)


def timed_request(*, host: str, port: int, delay: float, timeout_s: float) -> tuple[float, str]:
    """One request: (seconds it took, its status or why there was no answer)."""
    started = time.monotonic()
    status, error = asyncio.run(
        request_once(host=host, port=port, delay=delay, timeout_s=timeout_s)
    )
    return time.monotonic() - started, str(status) if status is not None else str(error)


def burst(*, host: str, port: int, k: int, delay: float, timeout_s: float) -> Burst:
    async def main() -> tuple[float, list[tuple[int | None, str | None]]]:
        started = time.monotonic()
        answers = await asyncio.gather(
            *(
                request_once(host=host, port=port, delay=delay, timeout_s=timeout_s)
                for _ in range(k)
            )
        )
        return time.monotonic() - started, answers

    seconds, answers = asyncio.run(main())
    kinds = Counter(str(s) if s is not None else str(e) for s, e in answers)
    return Burst(k=k, delay=delay, kinds=dict(sorted(kinds.items())), seconds=round(seconds, 3))

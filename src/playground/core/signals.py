"""Holding SIGINT and SIGTERM while a teardown runs, so it is never cut half-way."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_deferring: list[bool] = []


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block has finished, then act on them.

    Teardown (`down`, removing a load generator) must not be cut half-way by a Ctrl-C or a
    `kill`: that is how containers and networks get left behind. A signal that arrives during
    the block is remembered and raised as KeyboardInterrupt once the block is done.
    """
    if _deferring or threading.current_thread() is not threading.main_thread():
        yield  # already deferred by an enclosing block, or signals cannot be handled here
        return
    received: list[int] = []
    old = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in old:
        signal.signal(sig, lambda signum, frame: received.append(signum))
    _deferring.append(True)
    try:
        yield
    except Exception:
        if not received:
            raise
        # The person asked to stop: that wins over whatever else went wrong meanwhile.
    finally:
        _deferring.pop()
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if received:
        raise KeyboardInterrupt(f"signal {received[0]}")

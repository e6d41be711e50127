"""The app's own clock on each request, for the war story: where a thread's time goes.

With `TIMING_LOG` set (the story's compose files set it), each request the view handles adds
one line to that file: its id from nginx, the worker's pid, and four wall-clock instants in
epoch seconds, when the view began (a thread or greenlet had taken the request), when the call
to the third party began and ended, and when the view returned. Joined on the id with nginx's
access log (when nginx took the request) and slow_api's calls log (when the call arrived and
was answered there), they split a request's time into the wait for a thread, the app's own
work, the call's overhead and the third party's delay (docs/predict.md, "What decides a
collapse").

A line is one write() to a file opened with O_APPEND, so lines from the threads and processes
of one container never interleave. Without `TIMING_LOG` nothing is written and nothing is
opened; a write that fails is dropped (the measurement is lost, never the request).
"""

from __future__ import annotations

import os
import threading

PATH = os.environ.get("TIMING_LOG") or None

_fd: dict[int, int] = {}
_lock = threading.Lock()


def _open() -> int:
    """This process's descriptor for the log (a forked worker opens its own)."""
    pid = os.getpid()
    if pid not in _fd:
        with _lock:
            if pid not in _fd:
                assert PATH is not None
                _fd[pid] = os.open(PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    return _fd[pid]


def line(rid: str, began: float, call: tuple[float, float] | None, ended: float) -> str:
    """One request's line: `<id> <pid> <began> <call began> <call ended> <ended>`, a call that
    was never made written as `-` twice."""
    c0, c1 = (f"{call[0]:.6f}", f"{call[1]:.6f}") if call else ("-", "-")
    return f"{rid} {os.getpid()} {began:.6f} {c0} {c1} {ended:.6f}\n"


def record(rid: str | None, began: float, call: tuple[float, float] | None, ended: float) -> None:
    """Adds the request's line, where the log is on and the request has an id."""
    if PATH is None or not rid:
        return
    try:
        os.write(_open(), line(rid, began, call, ended).encode())
    except OSError:
        pass

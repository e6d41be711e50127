"""What a load tool's run comes to (:class:`LoadResult`), the errors of a load that cannot run or
left no report, and the reading of a tool's printed report that every tool's parser shares.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from playground.core.errors import UsageError


class LoadSettingsError(UsageError, ValueError):
    """A load the tool cannot run (ab's -n below -c, a concurrency past its limit, ...); the
    message says which setting and why."""


class LoadOutputError(ValueError):
    """A tool's output holds no usable report (the tool died, or was misused).

    The message is a single line and ends with the last error-looking line of
    the output, because that line (``apr_socket_recv: Connection refused
    (111)``, ``unable to connect to ...``) is what a person needs to see.
    """


@dataclass(frozen=True)
class LoadResult:
    """One load run, reduced to the figures the runner compares across scenarios.

    Counts are the tool's own, with their quirks:

    * ``complete`` -- ab: "Complete requests", which with ``-r`` includes
      requests that failed without any answer; wrk: "N requests in ...", which
      includes non-2xx responses.
    * ``failed`` -- ab: "Failed requests", a count of failure *events*: one
      reset connection can be counted under receive, length and exceptions at
      once, so ``failed`` may exceed ``complete``. wrk: the sum of the
      ``Socket errors`` line (absent line = 0). wrk's ``timeout`` figure is
      not a request count either: wrk adds one per stale connection every 2 s,
      plus one per response slower than ``--timeout`` (those are left out of its
      latency statistics).
    * ``failures`` -- by kind: ab -> connect, receive, length, exceptions;
      wrk -> connect, read, write, timeout.
    * ``non_2xx`` -- ab "Non-2xx responses"; wrk "Non-2xx or 3xx responses"
      (wrk actually counts status >= 400). Absent line = 0.
    * ``latency_ms`` -- keys p50, p90, p99, max. ab: its percentile table
      (whole milliseconds; ``max`` is the 100% row); wrk: the ``--latency``
      distribution and the Max column. Empty when the tool reported no timings.
    * ``connect_max_ms`` -- ab's "Connection Times" Connect max; about 1000 ms
      means a SYN was retransmitted (:mod:`playground.bench.diagnosis`). None for wrk, which does not report it.
    * ``steady_rps`` / ``mean_latency_ms`` -- ab: from the ``-g`` file (see
      :func:`steady_rps_from_ab`), None without one; wrk: its own Requests/sec
      and latency Avg (a duration-bound run has no start-up phase to remove).
    * ``unwritten`` -- ab: records in the ``-g`` file of connections ab opened
      but never sent a request on, which the server closed before ab finished
      (:func:`ab_unwritten`); each is also one of the Length failures. None
      without a ``-g`` file and for wrk.
    * ``connect_gap_ms`` -- ab: the widest gap between the ``-g`` file's connect
      times (:func:`connect_gap_ms`): how a slow connect is told from a SYN
      retransmit. None without a ``-g`` file and for wrk.
    """

    tool: str
    complete: int
    failed: int
    failures: dict[str, int]
    non_2xx: int
    time_taken_s: float
    rps: float
    latency_ms: dict[str, float]
    connect_max_ms: float | None
    steady_rps: float | None
    mean_latency_ms: float | None
    unwritten: int | None = None
    connect_gap_ms: float | None = None


def whole_seconds(*, value: float, what: str) -> int:
    """Round a positive duration up to whole seconds.

    ab reads ``-s`` with ``atoi`` and wrk reads ``-d``/``--timeout`` as an
    integer with an optional unit (``0.5s`` is a usage error), so fractions
    cannot be passed through; rounding *up* never makes a run shorter or a
    timeout stricter than asked.
    """
    if not math.isfinite(value) or value <= 0:
        raise LoadSettingsError(f"{what} must be a positive number of seconds, got {value!r}")
    return max(1, math.ceil(value))


_BENCHMARKING_PREFIX = re.compile(r"^Benchmarking .*?\(be patient\)\.*")
_BANNER = re.compile(
    r"^(This is ApacheBench|Copyright|Licensed to|Running \S+ test @|\d+ threads and \d+ connections)"
)
_ERRORISH = re.compile(
    r"\(\d+\)\s*$|error|refused|reset|unable|timeout|timed out|abort|invalid|cannot|usage",
    re.IGNORECASE,
)


def _last_error_line(text: str) -> str:
    """The line a person should see when a tool produced no report.

    ab prints ``Benchmarking host (be patient)...`` without a newline, so when
    stderr is merged its error lands on the same line; that prefix is removed,
    and so are the banners both tools print before doing anything. When a tool
    rejected its arguments, the line before its usage text is the reason.
    """
    lines = []
    for raw in text.splitlines():
        line = _BENCHMARKING_PREFIX.sub("", raw.strip()).strip()
        if line and not _BANNER.match(line):
            lines.append(line)
    if not lines:
        return "(no error line in the output; pass stderr too)"
    for i, line in enumerate(lines):
        # A misused tool prints its complaint, then pages of usage: the complaint matters.
        if line.startswith("Usage:"):
            return lines[i - 1] if i > 0 else line
    for line in reversed(lines):
        if _ERRORISH.search(line):
            return line
    return lines[-1]


def no_report(*, tool: str, what: str, text: str) -> LoadOutputError:
    return LoadOutputError(
        f"{tool} printed no report ({what} missing); it said: {_last_error_line(text)!r}"
    )


def search(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text, flags=re.MULTILINE)


def require(pattern: str, text: str, *, tool: str, what: str) -> re.Match[str]:
    match = search(pattern, text)
    if match is None:
        raise no_report(tool=tool, what=what, text=text)
    return match

"""Build load-generator command lines and turn what the tools print into numbers.

This is the only module that knows how ApacheBench (``ab``) and ``wrk`` are
invoked and what their reports look like, so the rest of the runner can deal in
:class:`LoadResult` values and never in text.

Both tools are driven as *closed loops*: a fixed number of connections, each
sending its next request as soon as the previous one has returned. That is why
the throughput a run can reach is bounded by ``concurrency / response time``
(:func:`ideal_rps`) and why Little's law is the right tool for recovering a
steady-state rate from per-request times (:func:`steady_rps_from_ab`).

Everything here was checked against the real tools on Linux (ApacheBench 2.3
from apache2-utils 2.4.71, wrk 4.1.0); the captured reports live in
``tests/data/ab_*`` and ``tests/data/wrk_*``. Some behaviour is surprising and
is written down where it matters:

* ab sends its **first request alone** and opens the other ``c - 1``
  connections only once it has returned (``-n 20 -c 10`` against a 0.2 s
  server takes 0.6 s, not 0.4 s), see :func:`ab_cap_rps`.
* ab's ``-g`` file is written **after** ab has sorted its samples, so its rows
  are in ascending order of total time (``ttime``), *not* completion order;
  see :func:`steady_rps_from_ab`.
* With ``-r``, ab counts a request that never got an answer as "complete" and
  counts failure *events*: against a closed port it reports
  ``Complete requests: 20``, ``Failed requests: 30`` and ~90,000 requests/s.
* ab's ``-s`` is an inactivity limit for the whole run: if nothing happens for
  that long, ab exits (status 119) without printing any results, ``-r`` or not.
* With ``-n`` a multiple of ``-c``, ab opens **one connection more than it
  sends requests on** and may count the server closing that idle connection
  as a completed request that failed (Length); :func:`ab_requests` picks an
  ``-n`` that leaves none over, :func:`ab_unwritten` finds them.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from playground.errors import UsageError
from playground.storymodel import ToolFigures

__all__ = [
    "AB_MAX_CONCURRENCY",
    "TOOLS",
    "AbRequest",
    "AbTool",
    "LoadOutputError",
    "LoadResult",
    "LoadSettingsError",
    "LoadTool",
    "WrkTool",
    "ab_cap_rps",
    "ab_requests",
    "ab_rows",
    "ab_unwritten",
    "connect_gap_ms",
    "ideal_rps",
    "oha_command",
    "oha_figures",
    "steady_rps_from_ab",
    "tool_version",
]

AB_MAX_CONCURRENCY = 20000
"""ab's historical ``MAX_CONCURRENCY`` ("Invalid Concurrency [Range 0..20000]").
The Debian build tried here (apache2-utils 2.4.71) accepted ``-c 200000``, so
the limit is enforced here rather than left to whichever ab is installed."""

WRK_MAX_THREADS = 2
"""wrk needs ``connections >= threads``; two threads keep a playground-sized
load generator from competing with the server under test for CPU."""


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
      means a SYN was retransmitted (:mod:`playground.diagnosis`). None for wrk, which does not report it.
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


class LoadTool(Protocol):
    """What the runner needs from a load generator: an argv and a parser.

    Both methods are pure (no process is started here), which keeps the
    commands and the parsing testable against captured output.
    """

    name: str

    def command(
        self,
        *,
        url: str,
        requests: int,
        concurrency: int,
        timeout_s: float,
        duration_s: float,
        per_request_path: str | None,
    ) -> list[str]:
        """Return the argv (no shell) for one bounded run against ``url``."""
        ...

    def parse(self, *, stdout: str, per_request: str | None, concurrency: int) -> LoadResult:
        """Parse the tool's report.

        Pass stdout and stderr together (``stderr=subprocess.STDOUT``) when you
        can: progress and error lines are ignored, and an error line is what
        makes a :class:`LoadOutputError` message useful.
        """
        ...


# --------------------------------------------------------------------------- helpers


def _whole_seconds(*, value: float, what: str) -> int:
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


def _no_report(*, tool: str, what: str, text: str) -> LoadOutputError:
    return LoadOutputError(
        f"{tool} printed no report ({what} missing); it said: {_last_error_line(text)!r}"
    )


def _search(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text, flags=re.MULTILINE)


def _require(pattern: str, text: str, *, tool: str, what: str) -> re.Match[str]:
    match = _search(pattern, text)
    if match is None:
        raise _no_report(tool=tool, what=what, text=text)
    return match


# --------------------------------------------------------------------------- ab


def ab_cap_rps(*, requests: int, concurrency: int, delay: float) -> float | None:
    """The highest requests/s ab can *report* for a server that takes ``delay`` s.

    ab sends its first request alone and opens the other ``c - 1`` connections
    only when it has returned (measured: ``-n 20 -c 10`` at 0.2 s takes 0.6 s,
    ``-n 10 -c 10`` takes 0.4 s). Even a server with unlimited parallelism
    therefore needs about ``n/c + 1`` rounds of ``delay``, so ab's own figure is
    capped at ``n / ((n/c + 1) * delay)`` -- for ``-n 2000 -c 200`` against a
    1 s upstream that is 181.8/s, not 200/s. The rounds really number
    ``1 + ceil((n - 1) / c)``, so the formula is exact when ``c`` divides ``n``
    and otherwise within one round (``-n 41 -c 10`` at 0.2 s: ab measured
    40.34/s against a cap of 40.2/s). None when ``delay`` is 0 (no cap to
    speak of).
    """
    if requests <= 0 or concurrency <= 0:
        raise ValueError(
            f"requests and concurrency must be positive, got n={requests}, c={concurrency}"
        )
    if delay < 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    if delay == 0:
        return None
    return requests / ((requests / concurrency + 1) * delay)


def ab_requests(*, rounds: int, concurrency: int) -> int:
    """The ``-n`` for ``rounds`` full rounds of ``c`` requests after ab's lone first one: ``rounds x c + 1``.

    Why the ``+ 1``: with ``-n`` a multiple of ``-c`` ab opens one connection
    more than it sends requests on. Read in ab.c (ApacheBench 2.3, httpd
    2.4.71, the version Debian trixie's apache2-utils builds):
    ``start_connect()`` opens a new connection whenever ``started < requests``,
    but ``started`` counts requests *written*, not connections opened; it is
    incremented at the end of ``write_request()``, which begins with ``if
    (started >= requests) return;``. When a connection's connect completes
    after the last request has been written, ab moves it to polling for input
    (``set_conn_state(c, STATE_CONNECTED)``) and calls ``write_request()``,
    which returns without writing. That connection then sits idle until the
    server gives up waiting for a request and closes it; ab reads 0 bytes,
    counts it in ``done`` as a finished request whose length differs from the
    document's (``err_length``) and, since it stops once ``done`` reaches
    ``-n``, leaves one real response unread. With ``-n c`` the surplus is the
    first slot's: its lone first request finishes, ab opens the other ``c - 1``
    connections, then reconnects the first slot while few have been written;
    the first slot's connect is the last to complete, and ``-n`` is reached
    without it (``strace``: ``c + 1`` connects, ``c`` writes). With ``-n k x
    c`` the same happens in the last round, when more slots reconnect in one
    pass than requests remain. It shows only when the server's wait for a
    request (uWSGI's ``socket-timeout``, nginx's ``client_header_timeout``,
    Gunicorn's ``keepalive``) is shorter than what is left of the run.

    With ``rounds x c + 1`` every round is full and every connection carries a
    request: the lone first, then ``rounds`` rounds of ``c`` (ab runs
    ``1 + ceil((n - 1) / c)`` rounds, :func:`ab_cap_rps`).
    """
    if rounds < 1 or concurrency < 1:
        raise ValueError(f"rounds and concurrency must be positive, got {rounds} and {concurrency}")
    return rounds * concurrency + 1


def ab_unwritten(rows: Sequence[AbRequest]) -> int:
    """How many of ab's ``-g`` records are connections it never sent a request on.

    ab fills a record from the connection slot's timestamps: ``wait`` is
    ``beginread - endwrite`` and ``ttime`` is ``done - start``. For a request
    that was written both fall inside the connection's life, so ``wait <=
    ttime``. ``endwrite`` and ``beginread`` are only set by a write and a read,
    so a connection closed without either keeps the previous request's (see
    :func:`ab_requests`): its ``wait`` is the previous request's while its
    ``ttime`` is how long the server let it sit idle, and ``ctime`` is 0 (its
    connect time, ``connect - start``, is negative and clamped: ``connect`` too is set
    when writing). A record whose ``wait`` exceeds its ``ttime`` is such a
    connection. (One that the server kept longer than the previous request's
    wait is not caught; a record of a slot's first connection has no previous
    request to read, but ab's surplus connections are never a slot's first.)
    """
    return sum(row.wait_ms > row.total_ms for row in rows)


def ideal_rps(*, concurrency: int, delay: float) -> float | None:
    """``c / delay``: a closed loop of ``c`` clients against a fully parallel server.

    This is the ceiling for any scenario (the response-time law with zero
    think time); a server that serialises requests reaches ``1 / delay``
    instead. None when ``delay`` is 0.
    """
    if concurrency <= 0:
        raise ValueError(f"concurrency must be positive, got {concurrency}")
    if delay < 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    if delay == 0:
        return None
    return concurrency / delay


def steady_rps_from_ab(
    *, rows: Sequence[AbRequest], concurrency: int
) -> tuple[float | None, float | None]:
    """Steady-state throughput and mean response time from ab's ``-g`` file.

    Returns ``(steady_rps, mean_latency_ms)``; ``(None, None)`` when the file
    has fewer than two data rows (``rows``: :func:`ab_rows`).

    Why not just count requests per second of the file? Its columns are
    ``starttime seconds ctime dtime ttime wait``; the start time (``seconds``)
    has a resolution of one second and the rows are **not in time order**: ab
    writes the file after sorting its samples by total time (ascending
    ``ttime``; checked with a server whose first request was its slowest --
    that request is the *last* row, and the fastest, last-sent request is the
    first). End times cannot be rebuilt, so a rate cannot be read off a
    timeline.

    What the file does give precisely is every request's response time
    ``ttime`` (ms, connect included). ab is a closed loop: each of its ``c``
    connections sends its next request the moment the previous one returns
    (zero think time). Little's law for that loop -- the response-time law --
    says ``X = c / R``: with ``c`` requests always in flight, each taking ``R``
    on average, ``c`` complete every ``R`` seconds. So::

        steady_rps = concurrency / mean(ttime in seconds)

    This is the rate of the loaded phase, free of ab's start-up (its lone first
    request) and drain (the last requests, when fewer than ``c`` are left),
    which drag ab's own "Requests per second" down on short runs. Because the
    rows are sorted, the lone first request cannot be picked out and is
    averaged in with the rest; it shifts the result by at most ``1/n`` of the
    difference between its time and the others'. Requests that failed without
    an answer are in the file too (ab records them), with tiny times that
    inflate the estimate -- check ``failed`` before trusting it.
    """
    if concurrency <= 0:
        raise ValueError(f"concurrency must be positive, got {concurrency}")
    ttimes = [row.total_ms for row in rows]
    if len(ttimes) < 2:
        return None, None
    mean_ms = sum(ttimes) / len(ttimes)
    if mean_ms <= 0:
        # Every request "took" 0 ms: they failed before anything happened.
        return None, mean_ms
    return concurrency / (mean_ms / 1000.0), mean_ms


@dataclass(frozen=True)
class AbRequest:
    """One row of ab's ``-g`` file: a request ab finished (failed ones included, with ``-r``)."""

    start_s: int  # when it was sent, whole seconds of the Unix epoch (ab's resolution)
    total_ms: float  # ttime: connect to the answer's end, in whole milliseconds
    wait_ms: float  # wait: request written to first byte read (see ab_unwritten)
    connect_ms: float = 0.0  # ctime: connect started to connected (0 where ab kept none)


def connect_gap_ms(rows: Sequence[AbRequest]) -> float | None:
    """The widest gap between consecutive connect times, sorted: a SYN retransmit adds a whole
    second to a connect, so retransmitted connects stand apart from the rest
    (:data:`playground.diagnosis.SYN_GAP_MS` says how far, and what was measured). None
    without rows."""
    times = sorted({r.connect_ms for r in rows})
    if not times:
        return None
    return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


def ab_rows(per_request_tsv: str) -> list[AbRequest]:
    """Every row of ab's ``-g`` file, in the file's order (ab sorts them by ``ttime``, so
    this is not the order they were sent in; see :func:`steady_rps_from_ab`)."""
    lines = [line for line in per_request_tsv.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0].split("\t")
    if not {"seconds", "ttime", "wait"} <= set(header):
        raise LoadOutputError(
            f"ab -g data has no 'seconds', 'ttime' and 'wait' columns; header: {lines[0]!r}"
        )
    sec, tt, wait = header.index("seconds"), header.index("ttime"), header.index("wait")
    ct = header.index("ctime") if "ctime" in header else None
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        try:
            rows.append(
                AbRequest(
                    start_s=int(fields[sec]),
                    total_ms=float(fields[tt]),
                    wait_ms=float(fields[wait]),
                    connect_ms=float(fields[ct]) if ct is not None else 0.0,
                )
            )
        except (IndexError, ValueError):
            raise LoadOutputError(f"ab -g data line {number} is not a request: {line!r}") from None
    return rows


_AB_BREAKDOWN = re.compile(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)")
_AB_PERCENTILE = re.compile(r"^\s*(\d+)%\s+(\d+)", re.MULTILINE)
_AB_PERCENT_KEYS = {50: "p50", 90: "p90", 99: "p99", 100: "max"}


class AbTool:
    """ApacheBench: request-count bound (``-n``), reports per-run and per-request data."""

    name = "ab"

    def command(
        self,
        *,
        url: str,
        requests: int,
        concurrency: int,
        timeout_s: float,
        duration_s: float,
        per_request_path: str | None,
        time_limit: bool = False,
    ) -> list[str]:
        """``ab -r [-t SECONDS] -n N -c C -s TIMEOUT [-g PATH] URL``.

        ``-r`` keeps ab going after socket errors (without it the first reset
        or refused connection aborts the run with no report). ``-s`` is whole
        seconds and, beware, limits *inactivity of the whole run*: when no
        connection makes progress for that long ab exits without a report.
        ``duration_s`` is ignored unless ``time_limit``: ab is bound by the
        request count. With ``time_limit`` ab also stops after ``duration_s``
        (whole seconds, rounded up): ``-t`` comes first, because it sets ab's
        request cap to 50,000 and the ``-n`` after it lowers that cap again.
        """
        if requests < 1:
            raise LoadSettingsError(f"ab needs at least one request, got -n {requests}")
        if concurrency < 1:
            raise LoadSettingsError(f"ab needs a concurrency of at least 1, got -c {concurrency}")
        if concurrency > AB_MAX_CONCURRENCY:
            raise LoadSettingsError(
                f"ab supports at most {AB_MAX_CONCURRENCY} concurrent connections, got -c {concurrency}"
            )
        if requests < concurrency:
            raise LoadSettingsError(
                f"ab needs requests >= concurrency (it refuses -n {requests} -c {concurrency}: "
                "'Cannot use concurrency level greater than total number of requests')"
            )
        argv = ["ab", "-r"]
        if time_limit:
            argv += ["-t", str(_whole_seconds(value=duration_s, what="duration_s"))]
        argv += [
            "-n",
            str(requests),
            "-c",
            str(concurrency),
            "-s",
            str(_whole_seconds(value=timeout_s, what="timeout_s")),
        ]
        if per_request_path is not None:
            argv += ["-g", per_request_path]
        argv.append(url)
        return argv

    def parse(self, *, stdout: str, per_request: str | None, concurrency: int) -> LoadResult:
        """Parse ab's plain-text report (and its ``-g`` data when given).

        Raises :class:`LoadOutputError` when the report is missing, e.g. when ab
        stopped at ``apr_socket_recv: Connection refused (111)`` (no ``-r``) or
        at ``apr_pollset_poll: The timeout specified has expired (70007)``.
        """
        complete = _require(
            r"^Complete requests:\s+(\d+)", stdout, tool="ab", what="'Complete requests'"
        )
        failed = _require(r"^Failed requests:\s+(\d+)", stdout, tool="ab", what="'Failed requests'")
        taken = _require(
            r"^Time taken for tests:\s+([\d.]+) seconds",
            stdout,
            tool="ab",
            what="'Time taken for tests'",
        )
        rps = _require(
            r"^Requests per second:\s+([\d.]+)", stdout, tool="ab", what="'Requests per second'"
        )

        breakdown = _AB_BREAKDOWN.search(stdout)
        # ab prints the breakdown only when something failed.
        counts = [int(x) for x in breakdown.groups()] if breakdown else [0, 0, 0, 0]
        failures = dict(zip(("connect", "receive", "length", "exceptions"), counts, strict=True))
        non_2xx = _search(r"^Non-2xx responses:\s+(\d+)", stdout)

        steady: float | None = None
        mean: float | None = None
        unwritten: int | None = None
        gap: float | None = None
        if per_request is not None:
            rows = ab_rows(per_request)
            steady, mean = steady_rps_from_ab(rows=rows, concurrency=concurrency)
            unwritten = ab_unwritten(rows)
            gap = connect_gap_ms(rows)

        return LoadResult(
            tool=self.name,
            complete=int(complete.group(1)),
            failed=int(failed.group(1)),
            failures=failures,
            non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
            time_taken_s=float(taken.group(1)),
            rps=float(rps.group(1)),
            latency_ms=_ab_latency(stdout),
            connect_max_ms=_ab_row_max(stdout, "Connect"),
            steady_rps=steady,
            mean_latency_ms=mean,
            unwritten=unwritten,
            connect_gap_ms=gap,
        )


def _ab_row_max(text: str, row: str) -> float | None:
    """Last figure of a "Connection Times" row (max, with or without ``-S``)."""
    match = _search(rf"^{row}:\s+(.*)$", text)
    if match is None:
        return None
    numbers = match.group(1).split()
    return float(numbers[-1]) if numbers else None


def _ab_latency(text: str) -> dict[str, float]:
    """p50/p90/p99/max from ab's percentile table.

    ab prints the table only when more than one request completed; for a
    single request the Total row's median and max stand in (they are that one
    request's time).
    """
    table = {int(p): float(ms) for p, ms in _AB_PERCENTILE.findall(text)}
    if all(p in table for p in _AB_PERCENT_KEYS):
        return {key: table[p] for p, key in _AB_PERCENT_KEYS.items()}
    total = _search(r"^Total:\s+(.*)$", text)
    if total is None:
        return {}
    numbers = [float(x) for x in total.group(1).split()]
    # -S (no confidence) prints "min avg max"; the default "min mean sd median max".
    median = numbers[3] if len(numbers) >= 5 else numbers[1]
    return {"p50": median, "p90": numbers[-1], "p99": numbers[-1], "max": numbers[-1]}


# --------------------------------------------------------------------------- wrk

_WRK_TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_WRK_METRIC = {"": 1, "k": 1_000, "M": 1_000_000, "G": 1_000_000_000}
_WRK_TIME = r"([\d.]+)(us|ms|s|m|h)\b"


def _wrk_ms(value: str, unit: str) -> float:
    return float(value) * _WRK_TIME_UNITS_MS[unit]


def _wrk_count(text: str) -> int:
    """wrk's counts may carry an SI suffix (``72.57k``); plain integers otherwise."""
    match = re.fullmatch(r"([\d.]+)([kMG]?)", text)
    if match is None:
        raise LoadOutputError(f"wrk printed an unreadable count: {text!r}")
    return round(float(match.group(1)) * _WRK_METRIC[match.group(2)])


class WrkTool:
    """wrk: duration bound (``-d``), reports aggregate statistics only.

    ``threads`` is the most wrk threads a run uses (two by default, see
    :data:`WRK_MAX_THREADS`); ``TOOLS["wrk-t12"]`` is the published demo's
    ``wrk -t12``, under its own name so a results file says which ran.
    """

    name = "wrk"

    def __init__(self, *, threads: int = WRK_MAX_THREADS, name: str = "wrk") -> None:
        if threads < 1:
            raise LoadSettingsError(f"wrk needs at least one thread, got {threads}")
        self.threads = threads
        self.name = name

    def command(
        self,
        *,
        url: str,
        requests: int,
        concurrency: int,
        timeout_s: float,
        duration_s: float,
        per_request_path: str | None,
    ) -> list[str]:
        """``wrk --latency -t T -c C -d Ds --timeout Ts URL`` with ``T = min(threads, C)``.

        ``requests`` is ignored: wrk runs for ``duration_s`` and sends as many
        requests as fit. ``per_request_path`` is ignored too: wrk has no
        per-request output. Durations are whole seconds (rounded up), because
        wrk rejects fractions.
        """
        if concurrency < 1:
            raise LoadSettingsError(f"wrk needs at least one connection, got -c {concurrency}")
        threads = min(self.threads, concurrency)
        return [
            "wrk",
            "--latency",
            "-t",
            str(threads),
            "-c",
            str(concurrency),
            "-d",
            f"{_whole_seconds(value=duration_s, what='duration_s')}s",
            "--timeout",
            f"{_whole_seconds(value=timeout_s, what='timeout_s')}s",
            url,
        ]

    def parse(self, *, stdout: str, per_request: str | None, concurrency: int) -> LoadResult:
        """Parse wrk's report (run with ``--latency``); ``per_request`` is ignored."""
        summary = _require(
            rf"^\s*(\S+) requests in {_WRK_TIME}", stdout, tool="wrk", what="'N requests in'"
        )
        rps = _require(r"^Requests/sec:\s+([\d.]+)", stdout, tool="wrk", what="'Requests/sec'")
        stats = _require(
            rf"^\s*Latency\s+{_WRK_TIME}\s+{_WRK_TIME}\s+{_WRK_TIME}",
            stdout,
            tool="wrk",
            what="'Latency' statistics",
        )
        dist_at = stdout.find("Latency Distribution")
        if dist_at < 0:
            raise LoadOutputError(
                "wrk output has no 'Latency Distribution' (run wrk with --latency)"
            )
        dist = {
            int(float(p)): _wrk_ms(v, u)
            for p, v, u in re.findall(
                rf"^\s*([\d.]+)%\s+{_WRK_TIME}", stdout[dist_at:], flags=re.MULTILINE
            )
        }
        missing = [p for p in (50, 90, 99) if p not in dist]
        if missing:
            raise LoadOutputError(f"wrk latency distribution lacks percentiles {missing}")

        socket = _search(
            r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", stdout
        )
        counts = [int(x) for x in socket.groups()] if socket else [0, 0, 0, 0]
        failures = dict(zip(("connect", "read", "write", "timeout"), counts, strict=True))
        non_2xx = _search(r"Non-2xx or 3xx responses:\s+(\S+)", stdout)
        rate = float(rps.group(1))
        complete = _wrk_count(summary.group(1))
        # With nothing completed wrk still prints a table of 0.00us: not timings.
        top = _wrk_ms(stats.group(5), stats.group(6))
        latency = (
            {"p50": dist[50], "p90": dist[90], "p99": dist[99], "max": top} if complete else {}
        )
        return LoadResult(
            tool=self.name,
            complete=complete,
            failed=sum(counts),
            failures=failures,
            non_2xx=_wrk_count(non_2xx.group(1)) if non_2xx else 0,
            time_taken_s=_wrk_ms(summary.group(2), summary.group(3)) / 1000.0,
            rps=rate,
            latency_ms=latency,
            connect_max_ms=None,
            steady_rps=rate,
            mean_latency_ms=_wrk_ms(stats.group(1), stats.group(2)) if complete else None,
        )


TOOLS: dict[str, LoadTool] = {
    "ab": AbTool(),
    "wrk": WrkTool(),
    # The companion demos' published wrk runs: 12 threads (with 400 connections, 30 s).
    "wrk-t12": WrkTool(threads=12, name="wrk-t12"),
}


# --------------------------------------------------------------------------- reading results


def tool_version(*, stdout: str) -> str | None:
    """The tool's version from its output, or None.

    ab prints ``This is ApacheBench, Version 2.3 <$Revision$>`` at the top of
    every run (``-q`` only silences progress lines), so its reports carry the
    version. A wrk report does not; only ``wrk -v`` output
    (``wrk debian/4.1.0-3+b2 [epoll] ...``) does.
    """
    ab = re.search(r"This is ApacheBench, Version (\S+)", stdout)
    if ab:
        return ab.group(1)
    wrk = _search(r"^wrk (\S+) \[", stdout)
    if wrk:
        return wrk.group(1)
    return None


# --------------------------------------------------------------------------- oha


def oha_command(
    *, url: str, rate: float, duration_s: float, timeout_s: float, connections: int
) -> list[str]:
    """oha as an open loop: `-q` a fixed query rate, `--latency-correction` to count latency
    from each request's scheduled time (no coordinated omission), `-c` connections enough that
    they never cap it, `--disable-keepalive` (a connection per request, as openloop.py opens),
    `-w` to wait for the requests still running at the end rather than abort them."""
    if rate <= 0 or duration_s <= 0 or timeout_s <= 0 or connections < 1:
        raise LoadSettingsError(
            f"oha needs a rate, a duration and a timeout above 0 and a connection, got "
            f"{rate}/s, {duration_s} s, {timeout_s} s, -c {connections}"
        )
    return [
        "oha",
        "--no-tui",
        "--output-format",
        "json",
        "-q",
        f"{rate:g}",
        "-z",
        f"{_whole_seconds(value=duration_s, what='duration_s')}s",
        "-w",
        "-c",
        str(connections),
        "--latency-correction",
        "--disable-keepalive",
        "-t",
        f"{timeout_s:g}s",
        url,
    ]


def oha_figures(json_text: str, *, duration_s: float) -> ToolFigures:
    """oha's JSON report (`--output-format json`): its status codes, its errors and its latency
    percentiles (seconds, over the requests that got an answer)."""
    try:
        data = json.loads(json_text)
        codes = {int(k): int(v) for k, v in (data.get("statusCodeDistribution") or {}).items()}
        errors = {str(k): int(v) for k, v in (data.get("errorDistribution") or {}).items()}
        percentiles = data.get("latencyPercentiles") or {}
    except (ValueError, TypeError, AttributeError) as exc:
        raise LoadOutputError(f"oha printed no JSON report: {exc}") from None
    ok = sum(n for code, n in codes.items() if 200 <= code < 300)
    errors.update({f"http {c}": n for c, n in codes.items() if not 200 <= c < 300})

    def seconds(key: str) -> float | None:
        value = percentiles.get(key)
        return float(value) if isinstance(value, int | float) and ok else None

    return ToolFigures(
        tool="oha",
        requests=ok + sum(errors.values()),
        ok=ok,
        duration_s=duration_s,
        latency_p50_s=seconds("p50"),
        latency_p99_s=seconds("p99"),
        errors=errors,
    )

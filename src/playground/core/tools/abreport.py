"""ApacheBench as a load tool (:class:`AbTool`): its command line, built by
:func:`playground.core.tools.ab.ab_command`, and its report turned into a
:class:`~playground.core.tools.output.LoadResult`.

Everything here was checked against the real tool on Linux (ApacheBench 2.3 from apache2-utils
2.4.71); the captured reports live in ``tests/data/ab_*``. Some behaviour is surprising and is
written down where it matters:

* ab sends its **first request alone** and opens the other ``c - 1``
  connections only once it has returned (``-n 20 -c 10`` against a 0.2 s
  server takes 0.6 s, not 0.4 s), see :func:`playground.core.tools.ab.ab_cap_rps`.
* ab's ``-g`` file is written **after** ab has sorted its samples, so its rows
  are in ascending order of total time (``ttime``), *not* completion order;
  see :func:`playground.core.tools.abrequests.steady_rps_from_ab`.
* With ``-r``, ab counts a request that never got an answer as "complete" and
  counts failure *events*: against a closed port it reports
  ``Complete requests: 20``, ``Failed requests: 30`` and ~90,000 requests/s.
* ab's ``-s`` is an inactivity limit for the whole run: if nothing happens for
  that long, ab exits (status 119) without printing any results, ``-r`` or not.
* With ``-n`` a multiple of ``-c``, ab opens **one connection more than it
  sends requests on** and may count the server closing that idle connection
  as a completed request that failed (Length); :func:`playground.core.tools.ab.ab_requests`
  picks an ``-n`` that leaves none over while the rounds finish together,
  :func:`playground.core.tools.abrequests.ab_unwritten` finds them.
"""

from __future__ import annotations

import re

from playground.core.tools.ab import AB_MAX_CONCURRENCY, ab_command
from playground.core.tools.abrequests import (
    ab_rows,
    ab_unwritten,
    connect_gap_ms,
    steady_rps_from_ab,
)
from playground.core.tools.output import (
    LoadResult,
    LoadSettingsError,
    require,
    search,
    whole_seconds,
)

_AB_BREAKDOWN = re.compile(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)")
_AB_PERCENTILE = re.compile(r"^\s*(\d+)%\s+(\d+)", re.MULTILINE)
_AB_PERCENT_KEYS = {50: "p50", 90: "p90", 99: "p99", 100: "max"}


class AbTool:
    """ApacheBench: request-count bound (``-n``), reports per-run and per-request data."""

    name = "ab"

    def version_command(self) -> list[str]:
        """``ab -V``: ``This is ApacheBench, Version 2.3 ...`` (every report starts so too)."""
        return ["ab", "-V"]

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
        """``ab -r [-t SECONDS] -n N -c C -s TIMEOUT [-g PATH] URL``, built by
        :func:`playground.core.tools.ab.ab_command` (which says what each flag does) once the load
        is one ab accepts.

        ``duration_s`` is ignored unless ``time_limit``: ab is bound by the request count.
        With ``time_limit`` ab also stops after ``duration_s``. Seconds are whole, rounded up.
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
        return ab_command(
            url=url,
            requests=requests,
            concurrency=concurrency,
            time_limit_s=whole_seconds(value=duration_s, what="duration_s") if time_limit else None,
            timeout_s=whole_seconds(value=timeout_s, what="timeout_s"),
            per_request_path=per_request_path,
        )

    def parse(self, *, stdout: str, per_request: str | None, concurrency: int) -> LoadResult:
        """Parse ab's plain-text report (and its ``-g`` data when given).

        Raises :class:`LoadOutputError` when the report is missing, e.g. when ab
        stopped at ``apr_socket_recv: Connection refused (111)`` (no ``-r``) or
        at ``apr_pollset_poll: The timeout specified has expired (70007)``.
        """
        complete = require(
            r"^Complete requests:\s+(\d+)", stdout, tool="ab", what="'Complete requests'"
        )
        failed = require(r"^Failed requests:\s+(\d+)", stdout, tool="ab", what="'Failed requests'")
        taken = require(
            r"^Time taken for tests:\s+([\d.]+) seconds",
            stdout,
            tool="ab",
            what="'Time taken for tests'",
        )
        rps = require(
            r"^Requests per second:\s+([\d.]+)", stdout, tool="ab", what="'Requests per second'"
        )

        breakdown = _AB_BREAKDOWN.search(stdout)
        # ab prints the breakdown only when something failed.
        counts = [int(x) for x in breakdown.groups()] if breakdown else [0, 0, 0, 0]
        failures = dict(zip(("connect", "receive", "length", "exceptions"), counts, strict=True))
        non_2xx = search(r"^Non-2xx responses:\s+(\d+)", stdout)

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
    match = search(rf"^{row}:\s+(.*)$", text)
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
    total = search(r"^Total:\s+(.*)$", text)
    if total is None:
        return {}
    numbers = [float(x) for x in total.group(1).split()]
    # -S (no confidence) prints "min avg max"; the default "min mean sd median max".
    median = numbers[3] if len(numbers) >= 5 else numbers[1]
    return {"p50": median, "p90": numbers[-1], "p99": numbers[-1], "max": numbers[-1]}

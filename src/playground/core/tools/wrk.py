"""wrk as a load tool (:class:`WrkTool`): its command line and its report turned into a
:class:`~playground.core.tools.output.LoadResult`. Checked against wrk 4.1.0 on Linux; the captured
reports live in ``tests/data/wrk_*``.
"""

from __future__ import annotations

import re

from playground.core.tools.output import (
    LoadOutputError,
    LoadResult,
    LoadSettingsError,
    require,
    search,
    whole_seconds,
)

WRK_MAX_THREADS = 2
"""wrk needs ``connections >= threads``; two threads keep a playground-sized
load generator from competing with the server under test for CPU."""


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

    def version_command(self) -> list[str]:
        """``wrk -v``: ``wrk debian/4.1.0-3+b2 [epoll] ...`` (a report does not say it)."""
        return ["wrk", "-v"]

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
            f"{whole_seconds(value=duration_s, what='duration_s')}s",
            "--timeout",
            f"{whole_seconds(value=timeout_s, what='timeout_s')}s",
            url,
        ]

    def parse(self, *, stdout: str, per_request: str | None, concurrency: int) -> LoadResult:
        """Parse wrk's report (run with ``--latency``); ``per_request`` is ignored."""
        summary = require(
            rf"^\s*(\S+) requests in {_WRK_TIME}", stdout, tool="wrk", what="'N requests in'"
        )
        rps = require(r"^Requests/sec:\s+([\d.]+)", stdout, tool="wrk", what="'Requests/sec'")
        stats = require(
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

        socket = search(
            r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", stdout
        )
        counts = [int(x) for x in socket.groups()] if socket else [0, 0, 0, 0]
        failures = dict(zip(("connect", "read", "write", "timeout"), counts, strict=True))
        non_2xx = search(r"Non-2xx or 3xx responses:\s+(\S+)", stdout)
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

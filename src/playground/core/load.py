"""The load interface: what the runner needs from a load generator (:class:`LoadTool`), the
tools it can run by name (:data:`TOOLS`), a closed loop's ceiling (:func:`ideal_rps`) and a
tool's version from its output.

Each tool's command line and parser is a module of :mod:`playground.core.tools` (``ab``: the command
line in :mod:`~playground.core.tools.ab`, the report in :mod:`~playground.core.tools.abreport`, the
per-request file in :mod:`~playground.core.tools.abrequests`; :mod:`~playground.core.tools.wrk`), so the
rest of the runner can deal in :class:`~playground.core.tools.output.LoadResult` values and never in
text.

Both tools are driven as *closed loops*: a fixed number of connections, each
sending its next request as soon as the previous one has returned. That is why
the throughput a run can reach is bounded by ``concurrency / response time``
(:func:`ideal_rps`) and why Little's law is the right tool for recovering a
steady-state rate from per-request times
(:func:`playground.core.tools.abrequests.steady_rps_from_ab`).
"""

from __future__ import annotations

import re
from typing import Protocol

from playground.core.tools.abreport import AbTool
from playground.core.tools.output import LoadResult, search
from playground.core.tools.wrk import WrkTool

__all__ = ["TOOLS", "LoadTool", "ideal_rps", "tool_version"]


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

    def version_command(self) -> list[str]:
        """Return the argv that prints the tool's version (read by :func:`tool_version`)."""
        ...

    def parse(self, *, stdout: str, per_request: str | None, concurrency: int) -> LoadResult:
        """Parse the tool's report.

        Pass stdout and stderr together (``stderr=subprocess.STDOUT``) when you
        can: progress and error lines are ignored, and an error line is what
        makes a :class:`LoadOutputError` message useful.
        """
        ...


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


TOOLS: dict[str, LoadTool] = {
    "ab": AbTool(),
    "wrk": WrkTool(),
    # The companion demos' published wrk runs: 12 threads (with 400 connections, 30 s).
    "wrk-t12": WrkTool(threads=12, name="wrk-t12"),
}


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
    wrk = search(r"^wrk (\S+) \[", stdout)
    if wrk:
        return wrk.group(1)
    return None

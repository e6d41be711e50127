"""Fault injection: what each serving mode does when things go wrong, measured over time.

Four faults, each driven against a scenario that is up and under load, each a class in its
own module that owns its phases and its checks:

* ``upstream-slowdown`` (:mod:`.slowdown`) -- the requested delay goes from 1 s to 5 s and
  back: does latency simply follow the upstream, or do requests queue behind busy workers?
* ``upstream-outage`` and ``db-outage`` (:mod:`.outage`) -- ``docker compose stop slow_api``
  (or ``postgres`` in the bonus scenario) under load, then ``start`` it again: 502/504 (503)
  promptly, no hung worker, normal service again within seconds, no restart.
* ``overload`` (:mod:`.overload`) -- ApacheBench at c=2000 from inside the scenario's network:
  no process may crash and no container restart; where the load was shed is reported.

The rest, one job each: :mod:`.probe` (the closed-loop prober and bursts), :mod:`.analysis`
(timeline, phase statistics, recovery), :mod:`.containers` (restarts and crashed workers),
:mod:`.session` (one compose file up, its clock and settings), :mod:`.run` (the whole run,
kept in faults.json by the core's store) and :mod:`.render` (faults.md). What a fault found
is typed in the core's :mod:`playground.faults.results`. Everything a fault does is a
command a reader can type (printed as it runs, and kept in ``faults.json``); docs/faults.md
shows them by hand.
"""

from __future__ import annotations

from playground.faults.analysis import (
    count_kinds,
    longest_overlapping,
    phase_stats,
    settle_time,
    stuck_verdict,
    time_to_recover,
    timeline,
    unexpected_answers,
)
from playground.faults.containers import (
    ServerState,
    compare_states,
    container_checks,
    server_state,
)
from playground.faults.outage import UPSTREAM_GRACE_S
from playground.faults.overload import shed_summary
from playground.faults.probe import Outcome, Prober, burst, request_once, timed_request
from playground.faults.render import render_markdown, write_report
from playground.faults.results import Burst, ContainerCheck, FaultSettings, PhaseStats
from playground.faults.run import FAULTS, KINDS, applies, run_faults
from playground.faults.session import FaultSession

__all__ = [
    "FAULTS",
    "KINDS",
    "UPSTREAM_GRACE_S",
    "Burst",
    "ContainerCheck",
    "FaultSession",
    "FaultSettings",
    "Outcome",
    "PhaseStats",
    "Prober",
    "ServerState",
    "applies",
    "burst",
    "compare_states",
    "container_checks",
    "count_kinds",
    "longest_overlapping",
    "phase_stats",
    "render_markdown",
    "request_once",
    "run_faults",
    "server_state",
    "settle_time",
    "shed_summary",
    "stuck_verdict",
    "time_to_recover",
    "timed_request",
    "timeline",
    "unexpected_answers",
    "write_report",
]

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
:mod:`.faultsession` (one compose file up, its clock and settings), :mod:`.run` (the whole run,
kept in faults.json by the core's store) and :mod:`.render` (faults.md). What a fault found
is typed in :mod:`.results`. Everything a fault does is a
command a reader can type (printed as it runs, and kept in ``faults.json``); docs/faults.md
shows them by hand.

Each fault is registered once, in the registry of faults (:mod:`.registry`), which the flag,
faults.json, the report and the record read; the runner's own faults are registered by
:mod:`.builtin`, imported here so that every module of the package sees them.
"""

from playground.faults import builtin as builtin

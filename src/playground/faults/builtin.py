"""The runner's own faults, each registered once in the registry of faults
(:mod:`playground.faults.registry`): its word, its verdict, its table, its record's figures
and the class that runs it. Imported by the package itself, so every module of ``faults/``
sees them. A new fault registers the same way, from its own module."""

from __future__ import annotations

from playground.faults import render, runrecord
from playground.faults.registry import FaultType, register
from playground.faults.results import OutageVerdict, OverloadVerdict, SlowdownVerdict

register(
    FaultType(
        name="upstream-slowdown",
        verdict=SlowdownVerdict,
        table=render.slowdown_table,
        figures=runrecord.slowdown_figures,
        counts=runrecord.probe_counts,
        runs="playground.faults.slowdown",
    )
)
for _name in ("upstream-outage", "db-outage"):
    register(
        FaultType(
            name=_name,
            verdict=OutageVerdict,
            table=render.outage_table,
            figures=runrecord.outage_figures,
            counts=runrecord.probe_counts,
            runs="playground.faults.outage",
        )
    )
register(
    FaultType(
        name="overload",
        verdict=OverloadVerdict,
        table=render.overload_table,
        figures=runrecord.overload_figures,
        counts=runrecord.overload_counts,
        runs="playground.faults.overload",
        timeline=False,
    )
)

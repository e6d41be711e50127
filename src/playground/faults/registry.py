"""The registry of faults: every fault the runner knows, each registered once, by its word.

A fault is one :class:`FaultType`: the word ``--fault`` takes, the class of its verdict on
one target (a dataclass with ``fits``, told apart in faults.json), the table the faults
report shows of it, the figures and counts its record keeps, and the :class:`Fault` subclass
that runs it. The flag's choices, the verdicts faults.json is read into
(:mod:`playground.faults.results`), the report (:mod:`playground.faults.render`), the record
(:mod:`playground.faults.runrecord`) and the run (:mod:`playground.faults.run`) all read
:data:`FAULTS`; the built-in faults are registered in :mod:`playground.faults.builtin`.

The class that runs a fault is named, not imported: a report or a record is redrawn from a
stored run without loading anything that drives Docker.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playground.faults.fault import Fault
    from playground.report.document import Table


@dataclass(frozen=True)
class FaultType:
    """One fault, as everything but its own module sees it."""

    name: str  # the word `--fault` takes and faults.json names it by
    verdict: type  # its verdict on one target: a dataclass with `fits`
    table: Callable[[Any], Table]  # the report's table of a FaultRan of it
    figures: Callable[[Any], dict[str, float | None]]  # its record's figures, from a verdict
    counts: Callable[[Any], tuple[int | None, dict[str, int]]]  # requests and answers by kind
    runs: str  # the module whose `RUNNERS` hold the Fault that runs it (its `name` this word)
    timeline: bool = True  # the report shows its answers second by second


#: Every fault, by its word, in the order `playground faults` runs them.
FAULTS: dict[str, FaultType] = {}


def register(fault: FaultType) -> FaultType:
    """Add a fault; its word must be new."""
    if fault.name in FAULTS:
        raise ValueError(f"fault {fault.name!r} is already registered")
    FAULTS[fault.name] = fault
    return fault


def names() -> tuple[str, ...]:
    return tuple(FAULTS)


def verdicts() -> tuple[type, ...]:
    """Every fault's verdict class, each once: what a target's verdict in faults.json may be."""
    return tuple(dict.fromkeys(f.verdict for f in FAULTS.values()))


def fault_type(name: str) -> FaultType:
    return FAULTS[name]


def runner(name: str) -> Fault:
    """The Fault that runs the fault named ``name``, imported only now."""
    runners: tuple[Fault, ...] = importlib.import_module(FAULTS[name].runs).RUNNERS
    return next(f for f in runners if f.name == name)

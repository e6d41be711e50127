"""A run's report: Markdown and self-contained HTML with charts, terminal tables, comparisons.

The package, by job: :mod:`.document` (the block model and its Markdown/HTML renderings, which
the fault and story reports use too), :mod:`.reading` (formatting figures, sections by kind),
:mod:`.sections` (the report's sections), :mod:`.contendersection` (the contenders' section and
its chart), :mod:`.benchcharts`, :mod:`.terminal`, :mod:`.benchcompare`.
The bench's page itself is :mod:`.benchpage`. The names below are read from their modules on
first use (PEP 562), so that importing one module of the package, :mod:`.document` for a
story's or a fault's report, loads neither the bench's charts nor matplotlib.
Everything reads the typed model (:mod:`playground.core.results`); the diagnosis it shows was made by
the bench (:mod:`playground.bench.diagnosis`) and is rendered, never re-derived.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from playground.report import document  # light: the block model every report uses

#: Each public name and the module of the package that holds it (the block model's own list).
_HOMES = {
    **dict.fromkeys(document.__all__, "document"),
    "compare": "benchcompare",
    "compare_table": "benchcompare",
    "demo_shape": "sections",
    "SECTIONS": "reading",
    "demo_table": "terminal",
    "summary_table": "terminal",
    "render": "benchpage",
    "write_report": "benchpage",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)

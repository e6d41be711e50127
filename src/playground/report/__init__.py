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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker reads the names where they live
    from playground.report.benchcompare import compare as compare
    from playground.report.benchcompare import compare_table as compare_table
    from playground.report.benchpage import render as render
    from playground.report.benchpage import write_report as write_report
    from playground.report.document import (
        Block as Block,
    )
    from playground.report.document import (
        BulletList as BulletList,
    )
    from playground.report.document import (
        Callout as Callout,
    )
    from playground.report.document import (
        CodeBlock as CodeBlock,
    )
    from playground.report.document import (
        Heading as Heading,
    )
    from playground.report.document import (
        Image as Image,
    )
    from playground.report.document import (
        Inline as Inline,
    )
    from playground.report.document import (
        Paragraph as Paragraph,
    )
    from playground.report.document import (
        Span as Span,
    )
    from playground.report.document import (
        Table as Table,
    )
    from playground.report.document import (
        render_html as render_html,
    )
    from playground.report.document import (
        render_markdown as render_markdown,
    )
    from playground.report.reading import SECTIONS as SECTIONS
    from playground.report.sections import demo_shape as demo_shape
    from playground.report.terminal import demo_table as demo_table
    from playground.report.terminal import summary_table as summary_table

#: Each public name and the module of the package that holds it.
_HOMES = {
    **dict.fromkeys(
        (
            "Block",
            "BulletList",
            "Callout",
            "CodeBlock",
            "Heading",
            "Image",
            "Inline",
            "Paragraph",
            "Span",
            "Table",
            "render_html",
            "render_markdown",
        ),
        "document",
    ),
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

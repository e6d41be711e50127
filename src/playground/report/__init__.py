"""A run's report: Markdown and self-contained HTML with charts, terminal tables, comparisons.

The package, by job: :mod:`.document` (the block model and its Markdown/HTML renderings, which
the fault and story reports use too), :mod:`.reading` (formatting figures, sections by kind),
:mod:`.sections` (the report's sections), :mod:`.contenders` (the contenders' section and its
chart), :mod:`.charts`, :mod:`.terminal`, :mod:`.compare`.
Everything reads the typed model (:mod:`playground.core.results`); the diagnosis it shows was made by
the bench (:mod:`playground.bench.diagnosis`) and is rendered, never re-derived.
"""

from __future__ import annotations

from pathlib import Path

from playground.core.results import Run
from playground.report.charts import CHART_ALTS, write_charts, write_timelines
from playground.report.compare import compare, compare_table
from playground.report.contenders import write_contender_chart
from playground.report.document import (
    Block,
    BulletList,
    Callout,
    CodeBlock,
    Heading,
    Image,
    Inline,
    Paragraph,
    Span,
    Table,
    render_html,
    render_markdown,
)
from playground.report.reading import SECTIONS, title
from playground.report.sections import demo_shape, document
from playground.report.terminal import demo_table, summary_table

__all__ = [
    "SECTIONS",
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
    "compare",
    "compare_table",
    "demo_shape",
    "demo_table",
    "render",
    "render_html",
    "render_markdown",
    "summary_table",
    "write_report",
]


def render(blocks: list[Block], *, title: str, images: dict[str, bytes]) -> tuple[str, str]:
    """The blocks as (Markdown, self-contained HTML); images by the file names Image blocks use."""
    return render_markdown(blocks), render_html(blocks, title=title, images=images)


def write_report(*, run_dir: Path, results: Run) -> list[Path]:
    """Write the charts, ``report.md`` and a self-contained ``report.html`` into ``run_dir``.

    Returns the paths written, charts first (the HTML embeds them), then ``report.md`` and
    ``report.html``. Charts without data are skipped, not left blank.
    """
    run = results
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    charts = [(name, CHART_ALTS.get(name, name)) for name in write_charts(run, run_dir)]
    timelines = write_timelines(run, run_dir)
    contenders = write_contender_chart(run, run_dir)
    blocks = document(run, charts, timelines, contenders_chart=contenders)
    names = [name for name, _ in [*charts, *timelines]] + ([contenders] if contenders else [])
    images = {name: (run_dir / name).read_bytes() for name in names}
    markdown, page = render(blocks, title=title(run), images=images)
    markdown_path, html_path = run_dir / "report.md", run_dir / "report.html"
    markdown_path.write_text(markdown, encoding="utf-8", newline="\n")
    html_path.write_text(page, encoding="utf-8", newline="\n")
    return [run_dir / name for name in names] + [markdown_path, html_path]

"""A bench or scale run's report: its charts, ``report.md`` and a self-contained
``report.html``, written into the run's folder."""

from __future__ import annotations

from pathlib import Path

from playground.core.results import Run
from playground.report.benchcharts import CHART_ALTS, write_charts, write_timelines
from playground.report.contendersection import write_contender_chart
from playground.report.document import Block, render_html, render_markdown
from playground.report.reading import title
from playground.report.sections import document


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

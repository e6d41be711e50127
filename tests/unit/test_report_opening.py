"""What a reader sees first in a run's report: its chart (the bench's throughput, the story's
goodput), three lines on how to read it, and a link to the whole of "How to read this" that
leads to that heading in both formats.

No charts are drawn here: the document is built from the recorded run with chart names only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from playground.core.results import Run
from playground.incident.storyresults import StoryRun
from playground.report import (
    BulletList,
    Heading,
    Image,
    Paragraph,
    Span,
    render_html,
    render_markdown,
)
from playground.report.sections import document
from playground.story import report as story_report

DATA = Path(__file__).resolve().parents[1] / "data"
CHARTS = [("rps.png", "Requests per second"), ("threads.png", "Threads")]


def recorded() -> Run:
    return Run.from_json(json.loads((DATA / "results_recorded.json").read_text(encoding="utf-8")))


def spans(item: object) -> list[Span]:
    """A guide line's spans, whether it is a string, a span or a list of them."""
    items = [item] if isinstance(item, str | Span) else list(item)  # type: ignore[call-overload]
    return [Span(i) if isinstance(i, str) else i for i in items]


def test_the_report_opens_with_its_chart_then_three_lines_that_link_the_rest() -> None:
    blocks = document(recorded(), CHARTS)
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1
    assert blocks[1] == Image("rps.png", "Requests per second")
    guide = blocks[2]
    assert isinstance(guide, BulletList) and len(guide.items) == 3
    links = [s.link for item in guide.items for s in spans(item) if s.link]
    assert links == ["#how-to-read-this"]
    headings = [b.text for b in blocks if isinstance(b, Heading)]
    assert "How to read this" in headings
    # The chart it opens with is not drawn a second time further down.
    assert [b.file_name for b in blocks if isinstance(b, Image)] == ["rps.png", "threads.png"]


def test_a_run_without_charts_still_opens_with_the_guide() -> None:
    blocks = document(recorded(), [])
    assert isinstance(blocks[1], BulletList)
    assert Paragraph("No chart: no entry has figures to plot.") in blocks


def test_the_guide_link_leads_to_its_heading_in_markdown_and_html() -> None:
    blocks = document(recorded(), CHARTS)
    markdown = render_markdown(blocks)
    assert "[How to read this](#how-to-read-this)" in markdown
    page = render_html(blocks, title="t", images={})
    assert '<a href="#how-to-read-this">How to read this</a>' in page
    assert len(re.findall(r'<h2 id="how-to-read-this">', page)) == 1
    # Every heading can be linked to, and the ids are unique (repeated titles get -1, -2).
    ids = re.findall(r'<h\d id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) == len(re.findall(r"<h\d", page))


@pytest.mark.parametrize("link", ["https://example.org/", "javascript:alert(1)", "#Bad Name"])
def test_a_link_goes_only_to_a_heading_of_the_report(link: str) -> None:
    with pytest.raises(ValueError, match="heading of the report"):
        Span("x", link=link)


def recorded_story() -> StoryRun:
    path = DATA / "story_results_recorded.json"
    return StoryRun.from_json(json.loads(path.read_text(encoding="utf-8")))


STORY_CHARTS = {"story-uwsgi-threads": "threads.png", "story-uwsgi-gevent": "gevent.png"}


def test_the_story_report_opens_with_every_targets_goodput_then_three_lines() -> None:
    blocks = story_report.document(recorded_story(), STORY_CHARTS, None, overlay="goodput.png")
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1
    assert isinstance(blocks[1], Image) and blocks[1].file_name == "goodput.png"
    guide = blocks[2]
    assert isinstance(guide, BulletList) and len(guide.items) == 3
    links = [s.link for item in guide.items for s in spans(item) if s.link]
    assert links == ["#how-to-read-this"]
    assert [b.text for b in blocks if isinstance(b, Heading)].count("How to read this") == 1
    # The headline's tables come before the whole reading guide, which comes before the rest.
    kinds = [type(b).__name__ for b in blocks]
    assert kinds.index("Table") < blocks.index(Heading(2, "How to read this"))
    assert Paragraph(story_report.READING) in blocks
    names = [b.file_name for b in blocks if isinstance(b, Image)]
    assert names == ["goodput.png", "threads.png", "gevent.png"]


def test_a_story_report_without_an_overlay_opens_with_its_first_targets_chart_once() -> None:
    blocks = story_report.document(recorded_story(), STORY_CHARTS, None)
    assert blocks[1] == Image(
        "threads.png", "story-uwsgi-threads: goodput, queues and latency per second"
    )
    assert isinstance(blocks[2], BulletList)
    assert [b.file_name for b in blocks if isinstance(b, Image)] == ["threads.png", "gevent.png"]
    # No chart at all: the guide still opens the report, and says nothing of a chart.
    bare = story_report.document(recorded_story(), {}, None)
    assert isinstance(bare[1], BulletList) and "chart" not in str(bare[1].items[0])

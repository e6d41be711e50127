"""Every chart is saved one way (playground.charting): the same run re-rendered gives the same
PNG bytes, and no chart leaves pyplot's global state behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from playground import results
from playground.storymodel import StoryRun

DATA = Path(__file__).resolve().parents[1] / "data"


def story_run() -> StoryRun:
    run = results.load_run(DATA / "story_results_recorded.json")
    assert isinstance(run, StoryRun)
    return run


def test_a_story_chart_re_rendered_gives_the_same_bytes(tmp_path: Path) -> None:
    from playground.incident.charts import plot_overlay, plot_target

    run = story_run()
    target = run.targets[0]
    for name in ("first", "again"):
        (tmp_path / name).mkdir()
        plot_target(target, run.story, tmp_path / name / "target.png")
        plot_overlay(run.targets, run.story, tmp_path / name / "overlay.png")
    for chart in ("target.png", "overlay.png"):
        first = (tmp_path / "first" / chart).read_bytes()
        assert first.startswith(b"\x89PNG") and len(first) > 10_000
        assert first == (tmp_path / "again" / chart).read_bytes(), chart
        # The bytes depend on what the chart shows, not on the matplotlib that drew it.
        assert b"Software" not in first and b"Matplotlib" not in first, chart


def test_no_chart_uses_pyplot(tmp_path: Path) -> None:
    """pyplot keeps every figure it opens in a global registry: a chart drawn through it
    outlives its function unless closed, and its state is shared between reports."""
    if "matplotlib.pyplot" in sys.modules:
        pytest.skip("another test in this process imported pyplot")
    from playground.incident.charts import plot_target

    run = story_run()
    plot_target(run.targets[0], run.story, tmp_path / "target.png")
    assert "matplotlib.pyplot" not in sys.modules


def test_the_busy_series_is_labelled_for_every_server_that_fills_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model fills the busy threads/greenlets for Gunicorn too: the label names no server."""
    from playground.incident import charts
    from playground.predict.run import predict_target
    from playground.scenarios import resolve_story
    from playground.storysettings import StorySettings

    drawn = []
    monkeypatch.setattr(charts, "save", lambda fig, path: drawn.append(fig))
    (target,) = resolve_story(["gunicorn-threads"])
    settings = StorySettings(before_s=5, incident_s=5, after_s=5)
    entry = predict_target(target, settings)
    assert any(r.busy_cores for r in entry.seconds)
    charts.plot_target(entry, settings, tmp_path / "target.png")
    (fig,) = drawn
    labels = [
        t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()
    ]
    assert "busy threads/greenlets" in labels
    assert not any("uWSGI" in label for label in labels)

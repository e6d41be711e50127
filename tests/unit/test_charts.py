"""Every chart is saved one way (playground.core.charting): the same run re-rendered gives the same
PNG bytes, and no chart leaves pyplot's global state behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from playground.commands import kinds
from playground.incident.storyresults import StoryRun

DATA = Path(__file__).resolve().parents[1] / "data"


def story_run() -> StoryRun:
    run = kinds.load_run(DATA / "story_results_recorded.json")
    assert isinstance(run, StoryRun)
    return run


def test_a_story_chart_re_rendered_gives_the_same_bytes(tmp_path: Path) -> None:
    """The per-second charts, and the sweep's and the cliff's with the model's line."""
    from playground.incident.charts import plot_overlay, plot_target
    from playground.story.cliff import cliff_sweep
    from playground.story.sweep import plot_sweep

    run = story_run()
    target = run.targets[0]
    swept = swept_run(predicted=True)
    assert swept.sweep is not None and swept.cliff is not None
    for name in ("first", "again"):
        (tmp_path / name).mkdir()
        plot_target(target, run.story, tmp_path / name / "target.png")
        plot_overlay(run.targets, run.story, tmp_path / name / "overlay.png")
        plot_sweep(swept.sweep, swept.story, tmp_path / name / "sweep.png")
        plot_sweep(cliff_sweep(swept.cliff), swept.story, tmp_path / name / "cliff.png")
    for chart in ("target.png", "overlay.png", "sweep.png", "cliff.png"):
        first = (tmp_path / "first" / chart).read_bytes()
        assert first.startswith(b"\x89PNG") and len(first) > 10_000
        assert first == (tmp_path / "again" / chart).read_bytes(), chart
        # The bytes depend on what the chart shows, not on the matplotlib that drew it.
        assert b"Software" not in first and b"Matplotlib" not in first, chart


PYPLOT_CHECK = """
import sys
from pathlib import Path
from playground.commands import kinds
from playground.incident.charts import plot_target
run = kinds.load_run(Path(sys.argv[1]))
plot_target(run.targets[0], run.story, Path(sys.argv[2]))
assert Path(sys.argv[2]).stat().st_size > 0
print("pyplot imported" if "matplotlib.pyplot" in sys.modules else "no pyplot")
"""


def test_no_chart_uses_pyplot(tmp_path: Path) -> None:
    """pyplot keeps every figure it opens in a global registry: a chart drawn through it
    outlives its function unless closed, and its state is shared between reports. Drawn in a
    fresh interpreter, where no other test can have imported pyplot first."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PYPLOT_CHECK,
            str(DATA / "story_results_recorded.json"),
            str(tmp_path / "target.png"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "no pyplot"


def test_the_busy_series_is_labelled_for_every_server_that_fills_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model fills the busy threads/greenlets for Gunicorn too: the label names no server."""
    from playground.core.scenarios import resolve_story
    from playground.incident import charts
    from playground.incident.settings import StorySettings
    from playground.predict.run import predict_target

    drawn = []
    monkeypatch.setattr(charts, "save_story_chart", lambda fig, path: drawn.append(fig))
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


def _steps(rates: list[float], goodput: list[float], model: list[float] | None) -> list:
    from playground.incident.storyresults import SweepStep
    from playground.incident.targetresults import PredictedFigures

    return [
        SweepStep(
            rate=r,
            offered_per_s=r,
            goodput_per_s=g,
            predicted=None if model is None else PredictedFigures(verdict="held", goodput_during=p),
        )
        for r, g, p in zip(rates, goodput, model or rates, strict=True)
    ]


def swept_run(*, predicted: bool) -> StoryRun:
    """A measured run with a sweep and a cliff's rate sweep: a thread pool whose steps carry
    the model's goodput (when `predicted`) and a target the model does not cover."""
    from dataclasses import replace

    from playground.incident.settings import SweepSettings
    from playground.incident.storyresults import Cliff, CliffTarget, Sweep, SweepTarget
    from playground.incident.targetresults import PredictedFigures

    rates = [40.0, 60.0, 80.0]
    pool = SweepTarget(
        name="story-uwsgi-threads",
        model="threads",
        capacity_per_s=64.0,
        steps=_steps(rates, [40.0, 59.0, 50.0], [40.0, 60.0, 55.0] if predicted else None),
    )
    why = PredictedFigures(error="the model covers uWSGI's and Gunicorn's thread pools")
    granian = SweepTarget(
        name="story-granian",
        model="threads",
        steps=[
            replace(st, predicted=why if predicted else None)
            for st in _steps(rates, [40.0, 60.0, 79.0], None)
        ],
    )
    run = story_run()
    return replace(
        run,
        targets=[],
        sweep=Sweep(settings=SweepSettings(rates=rates, delay=2.0), targets=[pool, granian]),
        cliff=Cliff(
            delay=2.0,
            targets=[CliffTarget(name=pool.name, rates=replace(pool, steps=list(pool.steps)))],
        ),
    )


def _drawn(monkeypatch: pytest.MonkeyPatch, run: StoryRun, tmp_path: Path) -> dict[str, object]:
    """The story's report written; each sweep-like chart's figure by its file's name."""
    from playground.story import report, sweep

    figures = {}
    real = sweep.save_story_chart

    def keep(fig, path):  # type: ignore[no-untyped-def]
        figures[path.name] = fig
        real(fig, path)

    monkeypatch.setattr(sweep, "save_story_chart", keep)
    report.write_report(run_dir=tmp_path, run=run)
    return figures


@pytest.mark.parametrize("chart", ["story-sweep.png", "story-cliff.png"])
def test_the_sweep_and_cliff_charts_draw_the_models_line_beside_the_measured_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chart: str
) -> None:
    """Each step's predicted goodput, dashed in the target's colour and labelled as the
    model's; none for a target the model does not cover."""
    from playground.story.sweep import PREDICTED_LABEL

    figure = _drawn(monkeypatch, swept_run(predicted=True), tmp_path)[chart]
    (ax,) = figure.axes  # type: ignore[attr-defined]
    lines = {line.get_label(): line for line in ax.get_lines()}
    model = lines[f"story-uwsgi-threads: {PREDICTED_LABEL}"]
    assert list(model.get_xdata()) == [40.0, 60.0, 80.0]
    assert list(model.get_ydata()) == [40.0, 60.0, 55.0]
    measured = lines["story-uwsgi-threads"]
    assert list(measured.get_ydata()) == [40.0, 59.0, 50.0]
    assert model.get_color() == measured.get_color()
    assert model.get_linestyle() == "--" and measured.get_linestyle() == "-"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"story-uwsgi-threads: {PREDICTED_LABEL}" in legend
    assert not any("granian" in label and PREDICTED_LABEL in label for label in legend)
    assert "the model's prediction of each step dashed" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("chart", ["story-sweep.png", "story-cliff.png"])
def test_a_run_without_the_models_figures_draws_no_predicted_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chart: str
) -> None:
    from playground.story.sweep import PREDICTED_LABEL

    figure = _drawn(monkeypatch, swept_run(predicted=False), tmp_path)[chart]
    (ax,) = figure.axes  # type: ignore[attr-defined]
    labels = [line.get_label() for line in ax.get_lines()]
    assert "story-uwsgi-threads" in labels
    assert not any(PREDICTED_LABEL in label for label in labels)
    assert "model" not in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "dashed" not in (tmp_path / "report.md").read_text()

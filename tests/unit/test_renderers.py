"""Measuring apart from rendering: every report writer, and the registry of kinds that
`playground report` reads, imports without Docker, Compose, any runner or the model of the
incident (`predict/`, the simulator). A runner is a module that imports
`playground.core.compose`, directly or through others (read from the imports with `ast`, as
the layer test reads them); the check runs in a fresh interpreter, so nothing another test
imported counts. A stored story run is redrawn from its results the same way: the model's
figures beside the measured ones are read from the file, not simulated again, and neither the
bench's page nor its charts (matplotlib's) are loaded for it, as they are for a bench run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from playground.core import jsonmodel
from playground.incident.storyresults import StoryRun
from playground.predict import beside
from tests.unit.test_layers import GRAPH

COMPOSE = "playground.core.compose"
#: The model of the incident: a simulator, never needed to redraw a stored run.
MODEL = "playground.predict"
RECORDED_STORY = Path(__file__).resolve().parents[1] / "data" / "story_results_recorded.json"
RECORDED_BENCH = RECORDED_STORY.with_name("results_recorded.json")
#: The bench's own report: its page and its charts.
BENCH_PAGE = {"playground.report.benchpage", "playground.report.benchcharts"}
#: The report writers, and the registry through which `playground report` reaches them.
WRITERS = (
    "playground.commands.kinds",
    "playground.report",
    "playground.story.report",
    "playground.faults.render",
)


def runners(graph: dict[str, set[str]]) -> set[str]:
    """Every module that imports compose, directly or through other modules; compose itself."""
    found = {COMPOSE}
    while grown := {m for m, imported in graph.items() if imported & found} - found:
        found |= grown
    return found


def imported_by(modules: tuple[str, ...], then: str = "") -> set[str]:
    """The playground modules a fresh interpreter holds after importing `modules` (and running
    `then`)."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
        f"{then}\n"
        "print(json.dumps(sorted(n for n in sys.modules if n.startswith('playground'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_the_runners_are_the_modules_that_reach_compose() -> None:
    found = runners(GRAPH)
    for name in ("playground.story.run", "playground.bench.runner", "playground.faults.run"):
        assert name in found
    assert "playground.story.report" not in found
    assert runners({"a": {"b"}, "b": {COMPOSE}, "c": set(), COMPOSE: set()}) == {"a", "b", COMPOSE}


def the_model(loaded: set[str]) -> list[str]:
    return sorted(n for n in loaded if n == MODEL or n.startswith(f"{MODEL}."))


def test_no_report_writer_imports_a_runner_or_the_model() -> None:
    loaded = imported_by(WRITERS)
    assert set(WRITERS) <= loaded
    assert sorted(loaded & runners(GRAPH)) == []
    assert the_model(loaded) == []
    assert sorted(loaded & BENCH_PAGE) == []


def test_a_stored_story_run_is_redrawn_without_the_model(tmp_path: Path) -> None:
    """`playground report` on a story run whose predicted figures are stored (every run the
    story command writes) loads neither a runner nor the model; a run stored before it had
    them (the recorded one) gets them from the model, which only then is imported."""
    stored, older = tmp_path / "stored", tmp_path / "older"
    older.mkdir()
    shutil.copy(RECORDED_STORY, older / "results.json")
    run = StoryRun.from_json(json.loads(RECORDED_STORY.read_text(encoding="utf-8")))
    assert run.missing_prediction()
    beside.attach(run)
    assert not run.missing_prediction()
    stored.mkdir()
    (stored / "results.json").write_text(json.dumps(jsonmodel.to_json(run)), encoding="utf-8")

    bench = tmp_path / "bench"
    bench.mkdir()
    shutil.copy(RECORDED_BENCH, bench / "results.json")

    def redraw(run_dir: Path) -> set[str]:
        then = (
            "from pathlib import Path\n"
            f"kind, run = playground.commands.kinds.load(Path({str(run_dir)!r}))\n"
            f"kind.write_report(Path({str(run_dir)!r}), run)"
        )
        return imported_by(("playground.commands.kinds",), then=f"import playground\n{then}")

    loaded = redraw(stored)
    assert "playground.story.report" in loaded and (stored / "report.md").exists()
    assert sorted(loaded & runners(GRAPH)) == []
    assert the_model(loaded) == []
    assert sorted(loaded & BENCH_PAGE) == []
    assert "playground.predict.beside" in redraw(older)  # the test can tell
    assert BENCH_PAGE <= redraw(bench)  # and so it can for the bench's page

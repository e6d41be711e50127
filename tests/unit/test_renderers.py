"""Measuring apart from rendering: every report writer, and the registry of kinds that
`playground report` reads, imports without Docker, Compose or any runner. A runner is a module
that imports `playground.core.compose`, directly or through others (read from the imports
with `ast`, as the layer test reads them); the check runs in a fresh interpreter, so nothing
another test imported counts."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.unit.test_layers import GRAPH

COMPOSE = "playground.core.compose"
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


def imported_by(modules: tuple[str, ...]) -> set[str]:
    """The playground modules a fresh interpreter holds after importing `modules`."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
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


def test_no_report_writer_imports_a_runner() -> None:
    loaded = imported_by(WRITERS)
    assert set(WRITERS) <= loaded
    assert sorted(loaded & runners(GRAPH)) == []

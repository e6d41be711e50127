"""The tests run in the order the README gives: unit tests first, then the integration tests;
and a check that must follow the work it judges (the fuzz's "unharmed") runs after it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests import lanes

ROOT = Path(__file__).resolve().parents[2]


def collected(*paths: str) -> list[str]:
    pytest = Path(sys.executable).with_name("pytest")
    proc = subprocess.run(
        [str(pytest), "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_unit_tests_come_before_integration_tests() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["pytest"]["ini_options"]["testpaths"] == [
        "tests/unit",
        "tests/integration",
    ]
    # `make test` (the README's command, and CI's): the unit tests' run, then the integration's.
    make = (ROOT / "Makefile").read_text()
    recipe = make.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    runs = [line.split()[1] for line in recipe.splitlines()[1:] if "$(PYTEST)" in line]
    assert runs == ["tests/unit", "tests/integration"], recipe


def test_each_fuzzed_app_is_judged_unharmed_after_everything_sent_to_it() -> None:
    ids = collected("tests/integration/test_fuzz.py")
    classes = list(dict.fromkeys(i.split("::")[1] for i in ids))
    assert classes, ids
    for cls in classes:
        names = [i.split("::")[2] for i in ids if i.split("::")[1] == cls]
        assert "test_unharmed" in names, cls
        assert names[-1] == "test_unharmed", (cls, names)


def test_the_integration_tests_run_in_two_lanes_and_the_remedies_last() -> None:
    """`make test` runs the integration tests on two workers, one lane each
    (tests/integration/lanes.py): the story's lane holds the story and the checks that
    publish nothing; the remedies, whose gthread pool moves with the machine's load, run in the
    other lane after everything else."""
    make = (ROOT / "Makefile").read_text()
    options = make.split("\nLANES := ", 1)[1].split("\n", 1)[0].split()
    assert options == ["-n", "2"], options
    recipe = make.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "$(PYTEST) tests/integration $(LANES)" in recipe, recipe

    ids = collected("tests/integration")
    modules = list(dict.fromkeys(lanes.module_of(i) for i in ids))
    story_lane = {m for m in modules if lanes.lane_of(f"{m}.py::t") == lanes.STORY_LANE}
    assert story_lane == {
        "test_story",
        "test_by_hand_commands",
        "test_compose_files",
        "test_your_service",
    }
    assert modules[-1] == "test_story_remedies", modules
    assert modules[:2] == ["test_story", "test_faults"], modules

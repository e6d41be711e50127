"""The tests run in the order the README gives: unit tests first, then the integration tests in
two lanes; and no test needs that order to be right: a shuffled order is one flag away
(`-p randomly`, pytest-randomly), and shuffles everything."""

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


def test_a_shuffled_order_is_one_flag_away() -> None:
    """`-p randomly` shuffles the integration tests (modules, classes, tests) by its seed,
    the same tests all the same; without it, the lanes' order (tests/lanes.py)."""
    plain = collected("tests/integration")
    shuffled = collected("tests/integration", "-p", "randomly", "--randomly-seed=1")
    assert sorted(shuffled) == sorted(plain)

    def modules(order: list[str]) -> list[str]:
        return list(dict.fromkeys(lanes.module_of(i) for i in order))

    def within(order: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for nodeid in order:
            out.setdefault(nodeid.rsplit("::", 1)[0], []).append(nodeid)
        return out

    assert modules(plain)[: len(lanes.FIRST)] == list(lanes.FIRST)
    # No lane order imposed on top of the seed's (with seed 1 the story does not come first).
    assert modules(shuffled)[: len(lanes.FIRST)] != list(lanes.FIRST), modules(shuffled)
    # Within a module or class too: some tests in another order than written.
    assert any(within(shuffled)[k] != v for k, v in within(plain).items())


def test_the_integration_tests_run_in_two_lanes() -> None:
    """`make test` runs the integration tests on two workers, one lane each (tests/lanes.py):
    the story's lane holds the story and the checks that publish nothing; the other lane
    starts with what loads the machine least."""
    make = (ROOT / "Makefile").read_text()
    options = make.split("\nLANES := ", 1)[1].split("\n", 1)[0].split()
    assert options == ["-n", "2"], options
    recipe = make.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "$(PYTEST) tests/integration $(LANES)" in recipe, recipe

    ids = collected("tests/integration")
    modules = list(dict.fromkeys(lanes.module_of(i) for i in ids))
    story_lane = {m for m in modules if lanes.lane_of(f"{m}.py::t") == lanes.STORY_LANE}
    # Every test that publishes the story's port is in its lane (a shuffled run keeps the
    # lanes): two of them at once would meet on STORY_PORT.
    assert story_lane == {
        "test_story",
        "test_story_remedies",
        "test_by_hand_commands",
        "test_compose_files",
        "test_your_service",
    }
    assert modules[:2] == ["test_story", "test_faults"], modules

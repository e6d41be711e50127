"""The integration tests' two lanes: which tests run beside which, and in what order.

`make test` runs the integration tests in two lanes side by side (pytest-xdist, `-n 2`):
  - the story's lane: the war story's incident, closed loop, sweep and SIGTERM
    (test_story.py), then the checks that only resolve compose files (nothing published),
    the remedies through a deeper incident (test_story_remedies.py), and the delay proxy's
    (test_your_service.py: its own network, nothing published);
  - the other lane: everything else, one test at a time, in the order below.
The story's tests bring up only their own compose projects (story-*), publish nginx on a port
of their own (STORY_PORT, set by tests/integration/conftest.py) and take a runner lock of
their own (tests/integration/storyruns.py), so nothing of the other lane can meet them. Their
loads are sized to collapse a pool whatever the machine does beside them (60 in flight for 16
threads), and the generator's self-check says where it was starved. Beside them, the other lane starts with what loads the machine
least (the faults' 30 clients at 1 s). The remedies share the story's port and projects, so
they run in its lane, whatever the order (a shuffled run keeps the lanes): beside the other
lane, their failure storm (an outbound timeout of 1.5 s: thousands of attempts) left the
generator on schedule (send lag p99 2.1-2.7 ms beside the faults' tests) once its container
had Docker's largest CPU weight (incident/openloop.py, GENERATOR_CPU_SHARES).
"""

from __future__ import annotations

from pathlib import Path

STORY_LANE = "story"
OTHER_LANE = "one-at-a-time"
STORY_LANE_MODULES = (
    "test_story",
    "test_story_remedies",
    "test_by_hand_commands",
    "test_compose_files",
    "test_your_service",
)
# The order: these first (the story's lane's long pole, the other lane's lightest), the rest
# as collected (alphabetically).
FIRST = ("test_story", "test_faults", "test_fuzz", "test_runner_faults", "test_runner_e2e")


def shuffled(config: object) -> bool:
    """Whether pytest-randomly orders this run (`-p randomly`): then no lane order is imposed,
    and each lane (under `-n 2`) runs its tests in the shuffled order."""
    manager = getattr(config, "pluginmanager", None)
    return bool(
        manager is not None
        and manager.has_plugin("randomly")
        and config.getoption("randomly_reorganize")  # type: ignore[attr-defined]
    )


def module_of(nodeid: str) -> str:
    """`tests/integration/test_story.py::test_x[a]` -> `test_story`."""
    return Path(nodeid.split("::", 1)[0]).stem


def lane_of(nodeid: str) -> str:
    return STORY_LANE if module_of(nodeid) in STORY_LANE_MODULES else OTHER_LANE


def run_order(module: str) -> int:
    """Where a module's tests go in the order collected: FIRST, then the rest."""
    return FIRST.index(module) if module in FIRST else len(FIRST)

"""`playground story` for the integration tests' fixtures (the story's and the remedies'): the
run it wrote, with its exit code checked against the findings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from playground import cli, results
from playground.story import findings
from playground.storymodel import StoryRun


@contextmanager
def own_runner_lock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The story's lane takes a runner lock of its own: it runs beside the other lane (its own
    compose projects and port, tests/lanes.py), whose runs hold the usual one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLAYGROUND_LOCK", str(tmp_path_factory.mktemp("lock") / "runner.lock"))
        yield


def run_in(results_dir: Path) -> StoryRun:
    """The one story run under `results_dir`."""
    (path,) = results_dir.glob("*-story/results.json")
    run = results.load_run(path)
    assert isinstance(run, StoryRun)
    return run


def exit_code_follows_the_findings(code: int, run: StoryRun) -> None:
    """Exit 1 exactly where a target errored or its figures cannot be trusted."""
    assert code == (1 if findings.failed(run) else 0), findings.failed(run)
    # Nothing may have failed but the generator's self-check on a busy machine.
    for t in run.targets:
        assert t.error is None and t.closed_loop_error is None, t.name
        assert {f.code for f in t.findings if f.severity == "error"} <= {"generator-invalid"}


def story_run(results_dir: Path, *argv: str) -> StoryRun:
    """`playground story ARGV` into `results_dir`: its run, the exit code checked against it."""
    code = cli.main(["story", *argv, "--results-dir", str(results_dir)])
    run = run_in(results_dir)
    exit_code_follows_the_findings(code, run)
    return run

"""`playground story` for the integration tests' fixtures (the story's and the remedies'): the
run it wrote, with its exit code checked against the findings, and only a run whose load
generator kept its schedule (a starved generator can make or hide a collapse).

Some assertions must not run on figures the project itself calls untrusted: where the generator
did not keep its schedule, the run is made once more, and if it is again untrusted the test
fails, naming the send lag (the report withholds those figures the same way).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from playground import cli
from playground.commands import kinds
from playground.incident.storyresults import StoryRun
from playground.incident.targetresults import GeneratorCheck
from playground.story import findings

ATTEMPTS = 2  # the run, and once more if its generator did not keep its schedule


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
    run = kinds.load_run(path)
    assert isinstance(run, StoryRun)
    return run


def exit_code_follows_the_findings(code: int, run: StoryRun) -> None:
    """Exit 1 exactly where a target errored or its figures cannot be trusted."""
    assert code == (1 if findings.failed(run) else 0), findings.failed(run)
    # Nothing may have failed but the generator's self-check on a busy machine.
    for t in run.targets:
        assert t.error is None and t.closed_loop_error is None, t.name
        assert {f.code for f in t.findings if f.severity == "error"} <= {"generator-invalid"}


def _lag(check: GeneratorCheck | None) -> str:
    if check is None:
        return "no self-check recorded"
    figures = (check.send_lag_p50_s, check.send_lag_p99_s, check.send_lag_max_s)
    lags = " / ".join("-" if v is None else f"{v:.3f} s" for v in figures)
    return f"send lag p50 / p99 / max {lags} ({'; '.join(check.reasons) or 'no reason'})"


def untrusted(run: StoryRun) -> list[str]:
    """Each target (and sweep step) whose generator did not keep its schedule, or recorded no
    self-check, with its send lag: the figures the report withholds. A prediction (`playground
    predict`) has no generator, so nothing in it is judged here."""
    if run.predicted:
        return []
    bad = [
        f"{t.name}: {_lag(t.check)}"
        for t in run.targets
        if t.check is None
        or not t.check.valid
        or any(f.code == "generator-invalid" for f in t.findings)
    ]
    if run.sweep is not None:
        bad += [
            f"{t.name} at {step.rate:g}/s (sweep): {_lag(step.check)}"
            for t in run.sweep.targets
            for step in t.steps
            if step.check is None or not step.check.valid
        ]
    return bad


def story_run(results_dir: Path, *argv: str) -> StoryRun:
    """`playground story ARGV` into `results_dir`: its run, the exit code checked against it,
    made once more where the generator did not keep its schedule; the test fails if it still
    did not."""
    seen: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        attempt_dir = results_dir / f"attempt-{attempt}"
        attempt_dir.mkdir(parents=True, exist_ok=True)
        code = cli.main(["story", *argv, "--results-dir", str(attempt_dir)])
        run = run_in(attempt_dir)
        exit_code_follows_the_findings(code, run)
        bad = untrusted(run)
        if not bad:
            return run
        seen += [f"attempt {attempt}: {line}" for line in bad]
    pytest.fail("the load generator did not keep its schedule:\n" + "\n".join(seen))

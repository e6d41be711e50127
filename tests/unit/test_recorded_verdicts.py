"""The recorded runs in tests/data, judged again by today's code: every verdict they carry must
be the one today's rules reach from their own figures, so a regression in a rule (a threshold
moved, a case lost) fails here instead of being read back from a file the runner wrote."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from playground.commands import kinds
from playground.core import verdicts
from playground.core.results import Entry, Run
from playground.incident import held
from playground.incident.storyresults import StoryRun
from playground.incident.targetresults import GeneratorCheck
from playground.story import findings
from tests.integration import storyruns

DATA = Path(__file__).resolve().parents[1] / "data"
# What each recorded measurement showed, by the tutorial's rule (c requests that each sleep
# `delay` take about `delay` together where a server holds them at once, c x delay where it
# takes one at a time), not by the rule under test: the files keep no verdict of their own
# (they are decided when read), so these are the figures today's rules must reach again.
# (file, target, c): (shape, keeps_scaling)
EXPECTED = {
    # 200 at 1 s: 178/s of ab's most 182/s.
    ("results_recorded.json", "calibration", 200): ("concurrent", True),
    # 0.98/s with c=5 at 1 s: one at a time.
    ("results_recorded.json", "devserver", 5): ("serialised", False),
    # psycopg2 blocks the gevent worker: 1.5/s, about 1.5 of 5 at once.
    ("results_recorded.json", "bonus-psycopg2", 5): ("capped", False),
    ("results_recorded.json", "bonus-psycogreen", 5): ("concurrent", False),
    # 154/s of 182/s at c=200 (0.87 of the steady ideal: short of keeping on scaling).
    ("results_recorded.json", "gevent-pywsgi", 200): ("concurrent", False),
    ("results_sweep.json", "devserver-threads", 10): ("concurrent", True),
    ("results_sweep.json", "devserver-threads", 50): ("concurrent", False),
    ("results_sweep.json", "gevent-pywsgi", 10): ("concurrent", True),
    ("results_sweep.json", "gevent-pywsgi", 50): ("concurrent", False),
    ("results_partial.json", "calibration", 200): ("concurrent", True),
    ("results_partial.json", "devserver", 5): ("serialised", False),
}


def entries(run: Run) -> list[Entry]:
    return [e for e in (run.calibration, run.probe, *run.scenarios) if e is not None]


@pytest.mark.parametrize("name", sorted({f for f, _, _ in EXPECTED}))
def test_each_recorded_entry_is_judged_as_it_was_measured(name: str) -> None:
    run = kinds.load_run(DATA / name)
    assert isinstance(run, Run)
    judged = {
        (name, e.name, e.concurrency): (e.shape, e.keeps_scaling)
        for e in (
            verdicts.verdicts(dataclasses.replace(e, shape=None, keeps_scaling=None))
            for e in entries(run)
        )
    }
    assert judged == {k: v for k, v in EXPECTED.items() if k[0] == name}


def story() -> StoryRun:
    run = kinds.load_run(DATA / "story_results_recorded.json")
    assert isinstance(run, StoryRun)
    return run


def test_the_recorded_storys_findings_are_todays() -> None:
    run = story()
    for target in run.targets:
        assert findings.for_target(target) == target.findings, target.name
    verdicts = {t.name: held.was_held(t) for t in run.targets}
    assert verdicts == {"story-uwsgi-threads": False, "story-uwsgi-gevent": True}
    # ... and from the figures themselves, by the report's own line.
    for target in run.targets:
        assert target.summary is not None and target.summary.visits_served_during is not None
        kept = target.summary.visits_served_during >= held.HELD_SHARE
        assert kept is verdicts[target.name], target.name


def starved(run: StoryRun, name: str) -> StoryRun:
    """The recorded run as if `name`'s generator had fallen behind its schedule."""
    check = GeneratorCheck(
        valid=False,
        reasons=["a send 0.8 s late"],
        send_lag_p50_s=0.01,
        send_lag_p99_s=0.5,
        send_lag_max_s=0.8,
    )
    targets = []
    for t in run.targets:
        if t.name == name:
            t = dataclasses.replace(t, check=check)
            t = dataclasses.replace(t, findings=findings.for_target(t))
        targets.append(t)
    return dataclasses.replace(run, targets=targets)


def test_the_story_tests_take_no_figures_from_a_starved_generator() -> None:
    """tests/integration/storyruns.py: a run whose generator did not keep its schedule is
    made again, and fails the test with its send lag if it is again untrusted."""
    assert storyruns.untrusted(story()) == []
    bad = starved(story(), "story-uwsgi-gevent")
    assert any(f.code == "generator-invalid" for f in bad.targets[1].findings)
    (line,) = storyruns.untrusted(bad)
    assert line.startswith("story-uwsgi-gevent: ") and "0.500 s" in line and "0.800 s" in line
    assert "a send 0.8 s late" in line
    # The exit code says so too (the run's own rule).
    assert findings.failed(bad) == ["story-uwsgi-gevent"]


def test_a_target_with_no_recorded_self_check_is_not_trusted() -> None:
    """No check recorded is no evidence the generator kept its schedule; a prediction has no
    generator at all, so nothing in it is untrusted."""
    run = story()
    unchecked = dataclasses.replace(
        run, targets=[dataclasses.replace(run.targets[0], check=None), *run.targets[1:]]
    )
    assert storyruns.untrusted(unchecked) == [f"{run.targets[0].name}: no self-check recorded"]
    assert storyruns.untrusted(dataclasses.replace(unchecked, kind="predict")) == []

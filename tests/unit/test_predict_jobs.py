"""The model's shortcuts change its time, not its answer: the same draws over one process or
two, and a draw's collapse verdict decided early, are the same figures as without them."""

from __future__ import annotations

import pytest

from playground.cli import main
from playground.core import jsonmodel
from playground.core.scenarios import resolve_story
from playground.incident import analysis, held
from playground.incident.settings import StorySettings
from playground.predict import draws, oddsmap
from playground.predict.run import simulate

#: Short phases that put gthread at its edge: some draws hold, some collapse.
SHORT = StorySettings(before_s=5, incident_s=15, after_s=5, incident_delay=2.1)


@pytest.fixture(scope="module")
def gthread():
    (target,) = resolve_story(["gunicorn-threads"])
    return target


def test_one_process_and_two_give_the_same_odds(gthread):
    one, two = (draws.predict_odds(gthread, SHORT, draws=4, jobs=jobs) for jobs in (1, 2))
    assert one.odds is not None and two.odds is not None
    assert len({d.outcome for d in one.odds.draws}) > 1  # draws that differ, in their order
    assert jsonmodel.to_json(one.odds) == jsonmodel.to_json(two.odds)
    assert jsonmodel.to_json(one.summary) == jsonmodel.to_json(two.summary)


def test_one_process_and_two_give_the_same_map(gthread, tmp_path):
    one, two = (
        oddsmap.predict_map(
            gthread,
            SHORT,
            rates=[40.0, 80.0],
            delays=[2.0, 3.0],
            draws=2,
            results_dir=tmp_path,
            jobs=jobs,
        )
        for jobs in (1, 2)
    )
    assert one.cells[0].collapsed != one.cells[-1].collapsed
    assert jsonmodel.to_json(one) == jsonmodel.to_json(two)


def whole_run_collapsed(target, settings: StorySettings, index: int) -> bool:
    """The verdict from every visit begun during the incident, the run not stopped."""
    s = draws.collapse_settings(draws.draw_settings(target, settings, index))
    start, end = s.before_s, s.before_s + s.incident_s
    visits = analysis.visits_from(simulate(target, s).attempts)
    during = [v for v in visits if start <= v.start < end]
    return held.outcome(sum(v.succeeded for v in during) / len(during), 0.0) != held.HELD


@pytest.mark.parametrize("name", ["gunicorn-threads", "uwsgi-threads"])
def test_a_verdict_decided_early_is_the_whole_runs(name):
    (target,) = resolve_story([name])
    found = []
    for delay in (2.0, 2.6, 3.0):
        settings = StorySettings(before_s=5, incident_s=15, after_s=5, incident_delay=delay)
        for index in range(3):
            early = draws.collapsed(target, settings, index)
            assert early == whole_run_collapsed(target, settings, index), (delay, index)
            found.append(early)
    assert True in found and False in found


def test_jobs_below_one_is_one_line_and_exit_2(capsys, tmp_path):
    code = main(["predict", "gunicorn-threads", "--jobs", "0", "--results-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--jobs must be at least 1, got 0" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []

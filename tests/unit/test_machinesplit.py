"""`playground predict --shares-from RUN`: the model draws the busiest shares of a run measured
on the machine a prediction is for, where it would draw its fit run's."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from playground.cli import main
from playground.core import jsonmodel, records
from playground.core.errors import UsageError
from playground.core.scenarios import resolve_story
from playground.incident import runrecords
from playground.incident.settings import MeasuredSplit, StoryError, StorySettings
from playground.predict import draws, machinesplit, measured
from playground.predict.system import system_for

#: A run whose busiest worker began 0.80-0.85 of the requests, where the fit run's began
#: 0.66-0.72 (`playground story gunicorn-threads --incident-delay 1.7 --repeat 15`).
HIGH = "20261205-030154-story"
#: Where the fit run's shares mostly hold and this run's collapse (docs/predict.md).
EDGE = StorySettings(incident_delay=1.6)


@pytest.fixture(scope="module")
def gthread():
    (target,) = resolve_story(["gunicorn-threads"])
    return target


@pytest.fixture(scope="module")
def high():
    return machinesplit.load(HIGH, records.RECORDS_DIR)


def test_a_runs_split_is_its_trusted_repeats_shares_behind_its_front(high):
    record = runrecords.load(records.RECORDS_DIR / f"{HIGH}.json")
    expected = [t.mechanism.busiest_share_begun_before for t in record.targets if t.valid]
    (split,) = high
    assert (split.run, split.front, split.rate) == (HIGH, "nginx", 60.0)
    assert list(split.shares) == expected and len(expected) == 15


def test_the_draws_take_the_given_runs_shares_where_they_would_take_the_fit_runs(gthread, high):
    settings = StorySettings(shares_from=high)
    own = [draws.draw_settings(gthread, settings, i).busiest_share or 0 for i in range(200)]
    fit = [draws.draw_settings(gthread, StorySettings(), i).busiest_share or 0 for i in range(200)]
    assert abs(statistics.median(own) - statistics.median(high[0].shares)) < 0.02
    assert statistics.median(own) > statistics.median(fit) + 0.08
    # Behind HAProxy the run gave no shares: the draws keep HAProxy's fit run's.
    (behind,) = resolve_story(["gunicorn-threads+haproxy"])
    assert measured.shares("haproxy", high) == measured.shares("haproxy")
    assert system_for(behind, settings).share_rate is None


def test_a_sweeps_fixed_share_and_the_kernels_preference_come_from_the_run(gthread, high):
    settings = StorySettings(shares_from=high)
    system = system_for(gthread, settings)
    assert system.busiest_share == statistics.median(high[0].shares)
    assert system.share_rate == 60.0
    slower = tuple(replace(s, rate=30.0) for s in high)
    assert system_for(gthread, StorySettings(shares_from=slower)).busiest_preference != (
        system.busiest_preference
    )


def test_the_machines_split_moves_the_models_odds(gthread, high):
    """Where the busiest worker takes more, the pool tips sooner: at 1.6 s the model with this
    run's shares collapses in more draws than with the fit run's."""
    own = draws.predict_odds(gthread, replace(EDGE, shares_from=high), draws=8, jobs=2)
    fit = draws.predict_odds(gthread, EDGE, draws=8, jobs=2)
    assert own.odds is not None and fit.odds is not None
    held_own = own.odds.frequency("held").k
    held_fit = fit.odds.frequency("held").k
    assert held_own + 3 <= held_fit, (held_own, held_fit)
    assert own.odds.shares_run == HIGH and fit.odds.shares_run is None


def test_the_split_goes_into_the_run_file_and_back(high):
    settings = StorySettings(shares_from=high)
    data = jsonmodel.to_json(settings)
    assert data["shares_from"][0]["run"] == HIGH
    assert jsonmodel.from_json(StorySettings, data, "settings") == settings
    assert "shares_from" not in jsonmodel.to_json(StorySettings())


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("envoy", 60.0, (0.7,)), "front must be nginx or haproxy"),
        (("nginx", 0.0, (0.7,)), "rate must be above 0"),
        (("nginx", 60.0, (1.2,)), "every share"),
    ],
)
def test_a_split_no_run_can_give_is_refused(fields, message):
    with pytest.raises(StoryError, match=message):
        MeasuredSplit("r", *fields)


def test_a_prediction_cannot_give_the_shares(tmp_path, capsys):
    argv = ["predict", "--results-dir", str(tmp_path), "--draws", "1", "--jobs", "1"]
    assert main([*argv, "uwsgi-threads"]) == 0
    capsys.readouterr()
    assert main([*argv, "--shares-from", "latest", "gunicorn-threads"]) == 2
    err = capsys.readouterr().err
    assert "is a predict run" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(UsageError, match="a predict run"):
        machinesplit.load("latest", tmp_path)


def test_every_committed_prediction_drew_the_shares_its_runs_record_holds():
    """A prediction's shares re-derived from the record of the run it names: the page's
    predictions that drew a machine's split drew that run's repeats, and nothing else."""
    from playground.incident import predictrecord

    drew = [p for p in predictrecord.load_all() if p.settings.get("shares_from")]
    assert drew
    for p in drew:
        for kept in p.settings["shares_from"]:
            (split,) = [
                s for s in machinesplit.load(kept["run"], records.RECORDS_DIR)
                if s.front == kept["front"]
            ]  # fmt: skip
            assert jsonmodel.to_json(split) == kept, p.run_id


def test_a_prediction_from_a_machines_split_names_its_run_and_its_own_score(
    tmp_path, capsys, monkeypatch
):
    """The text says which run the shares came from and gives the error of the model drawing a
    machine's split (edgescore.SPLIT_SCORED), not the fit run's, within 80 columns."""
    from playground.incident import edgescore, predictrecord

    model = edgescore.SPLIT_SCORED[0].model
    (kept,) = [p for p in predictrecord.load_all() if p.run_id == model]
    (run,) = edgescore.split_runs(kept)
    monkeypatch.chdir(tmp_path)  # results/ as a reader's run writes it, not a long path
    argv = ["predict", "--results-dir", "results", "--draws", "4", "--jobs", "1"]
    assert main([*argv, "--incident-delay", "1.6", "--shares-from", run, "gunicorn-threads"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    text = "\n".join(lines)
    assert f"in run {run} (--shares-from)" in text
    assert "with its machine's split, scored" in text
    assert f"Brier score at all {len(edgescore.SPLIT_SCORED)} scored settings" in text

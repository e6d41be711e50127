"""The model scored where a pool tips (incident/edgescore.py): measured k of n and the model's P
read from records, the Brier score beside the five references, each computed by hand here."""

from __future__ import annotations

import pytest

from playground.core.odds import Frequency
from playground.core.records import RecordError
from playground.incident import edgescore
from playground.incident.predictrecord import PredictedTarget, PredictRecord
from playground.incident.runrecords import RunRecord, TargetRecord
from tests.unit import chart_labels

SETTING = edgescore.ScoredSetting(
    label="gthread at 2 s",
    target="gunicorn-threads",
    pool=128,
    rate=60.0,
    incident_delay=2.0,
    measured=("20990101-000000-story",),
    model="20990101-000001-predict",
)


def _story(served: list[float], *, valid: list[bool] | None = None) -> RunRecord:
    valid = valid or [True] * len(served)
    targets = [
        TargetRecord(name="gunicorn-threads", repeat=i + 1, visits_served_during=s, valid=v)
        for i, (s, v) in enumerate(zip(served, valid, strict=True))
    ]
    return RunRecord(run_id="20990101-000000-story", kind="story", targets=targets)


def _model(collapsed: int, not_recovered: int, draws: int) -> PredictRecord:
    t = PredictedTarget(
        name="gunicorn-threads",
        draws=draws,
        held=draws - collapsed - not_recovered,
        collapsed=collapsed,
        not_recovered=not_recovered,
    )
    return PredictRecord(run_id="20990101-000001-predict", kind="predict", targets=[t])


def test_a_setting_counts_its_trusted_repeats_and_the_models_collapsed_draws():
    story = _story([0.5, 0.96, 0.94, 0.2], valid=[True, True, True, False])
    assert edgescore.measured(SETTING, [story]).k == 2  # 0.5 and 0.94; 0.2 not trusted
    assert edgescore.measured(SETTING, [story]).n == 3
    assert edgescore.model_draws(SETTING, [_model(10, 14, 96)]).share == pytest.approx(24 / 96)


def test_the_brier_scores_are_the_models_and_the_references_computed_by_hand():
    story = _story([0.5, 0.5, 0.5, 1.0])  # collapsed 3 of 4
    lines = edgescore.tables([SETTING], [story], [_model(0, 48, 96)])  # P = 0.5
    scores = {line.split(" | ")[0][2:]: float(line.split(" | ")[1]) for line in lines[2:8]}
    assert scores["the model"] == pytest.approx(0.25)
    assert scores["a coin: always a half"] == pytest.approx(0.25)
    assert scores["always the majority outcome"] == pytest.approx(0.25)  # 1 wrong of 4
    assert scores["Little's law alone"] == pytest.approx(0.75)  # 120 < 128: holds, 3 wrong
    # base rate and floor: p = 0.75, 3 x 0.25^2 + 0.75^2 over 4
    assert scores["the base rate of these repeats"] == pytest.approx(0.1875, abs=1e-3)
    assert scores["the floor: each setting's own frequency"] == pytest.approx(0.1875, abs=1e-3)
    # the draws' interval: Wilson's over 48 of 96
    assert lines[-1] == "| gthread at 2 s | 3 of 4 (30-95 %) | 0.50 (0.40-0.60) | -0.25 | holds |"


def test_a_run_or_a_prediction_not_on_record_is_an_error_not_a_gap():
    with pytest.raises(RecordError, match="no record of run 20990101-000000-story"):
        edgescore.measured(SETTING, [])
    with pytest.raises(RecordError, match="has no odds for gunicorn-threads"):
        edgescore.model_draws(SETTING, [])


def test_a_prediction_that_drew_its_shares_from_a_scored_run_cannot_score_on_it():
    """`predict --shares-from RUN` fits the model to RUN: scored on RUN's repeats, refused."""
    from dataclasses import replace

    split = {"run": SETTING.measured[0], "front": "nginx", "rate": 60.0, "shares": [0.7]}
    fitted = replace(_model(10, 14, 96), settings={"shares_from": [split]})
    with pytest.raises(RecordError, match="drew its shares from 20990101-000000-story"):
        edgescore.model_draws(SETTING, [fitted])
    other = replace(fitted, settings={"shares_from": [{**split, "run": "20990101-000002-story"}]})
    assert edgescore.model_draws(SETTING, [other]).k == 24
    assert edgescore.split_runs(other) == ["20990101-000002-story"]


def test_the_calibration_plot_is_drawn_from_the_points_and_changes_with_them(tmp_path):
    from playground.incident.calibration import plot_calibration

    first, second, third = (tmp_path / f"{i}.png" for i in range(3))
    scored = edgescore.points([SETTING], [_story([0.5, 1.0])], [_model(0, 48, 96)])
    plot_calibration(scored, first)
    plot_calibration(scored, second)
    assert first.read_bytes() == second.read_bytes()  # the same points, the same bytes
    moved = edgescore.points([SETTING], [_story([0.5, 0.5])], [_model(0, 48, 96)])
    plot_calibration(moved, third)
    assert third.read_bytes() != first.read_bytes()


def test_the_scores_command_prints_the_pages_table(capsys):
    from playground.incident import runrecords
    from playground.predict import validation

    assert validation.main(["--scores"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    page = validation.PAGE.read_text()
    block = page.split("<!-- validation:edge-scores -->\n")[1].split("\n<!-- /validation")[0]
    assert printed == block.splitlines()
    assert printed == validation.page_tables(runrecords.load_all())["edge-scores"]


def test_the_committed_calibration_plot_is_the_records_drawn_again(tmp_path):
    from playground.incident import runrecords
    from playground.predict import validation

    drawn = tmp_path / "calibration.png"
    validation.calibration_png(runrecords.load_all(), drawn)
    assert drawn.read_bytes() == validation.CALIBRATION.read_bytes()


def test_predicts_error_lines_give_the_targets_scored_settings_and_nothing_without_records(
    monkeypatch, tmp_path
):
    from playground.incident import predictrecord, runrecords

    monkeypatch.setattr(edgescore, "SCORED", (SETTING,))
    monkeypatch.setattr(runrecords, "load_all", lambda directory: [_story([0.5, 0.5, 0.5, 1.0])])
    monkeypatch.setattr(predictrecord, "load_all", lambda directory: [_model(0, 48, 96)])
    lines = edgescore.error_lines("gunicorn-threads", directory=tmp_path / "docs" / "runs")
    assert lines[1:] == [
        "gthread at 2 s: P 0.50, 3 of 4 (30-95 %) collapsed, off -0.25",
        "Brier score at all 1 scored settings 0.250 (a coin's 0.250)",
    ]
    assert edgescore.error_lines("uwsgi-threads", directory=tmp_path) == []  # not scored
    monkeypatch.setattr(runrecords, "load_all", lambda directory: [])  # no records at hand
    assert edgescore.error_lines("gunicorn-threads", directory=tmp_path) == []


def test_no_run_that_fits_the_model_scores_it():
    """Fit and score never share a run: the model's fit runs (predict.measured: the split's,
    the busy time's and a full pool's time per request; predict.healthchecks: Docker's start
    of a check) stay out of every scored setting's measured runs."""
    from playground.predict import healthchecks, measured

    fit = {
        *measured.FIT_RUNS.values(),
        *measured.BUSY_FIT_RUNS,
        *(run for runs in measured.TURN_FIT_RUNS.values() for run in runs),
        healthchecks.EXEC_FIT_RUN,
    }
    scored = {run for s in (*edgescore.SCORED, *edgescore.SPLIT_SCORED) for run in s.measured}
    assert fit and scored and not fit & scored


def point(label: str, p_draws: int, collapsed: int) -> edgescore.Point:
    """A scored setting of 12 repeats, `collapsed` of them, where `p_draws` of 100 draws
    collapsed."""
    from playground.incident import scoring

    setting = scoring.Setting(
        label=label, target="t", rate=60.0, incident_delay=2.0, pool=128,
        collapsed=Frequency(collapsed, 12),
    )  # fmt: skip
    return edgescore.Point(setting=setting, draws=Frequency(p_draws, 100))


def test_the_plots_near_points_share_one_list_of_labels_and_far_ones_do_not():
    """No label is drawn over another: P 0.00 and 0.07 at 0 of n share a place; 0.60 does not."""
    from dataclasses import replace

    from playground.incident import calibration

    near, nearby, far = point("a", 0, 0), point("b", 7, 0), point("c", 60, 3)
    labels = calibration._labels([near, nearby, far])
    assert [place.names for place in labels.values()] == [
        ["a: 0 of 12, P 0.00", "b: 0 of 12, P 0.07"],
        ["c: 3 of 12, P 0.60"],
    ]
    assert len(calibration._labels([near, replace(nearby, draws=Frequency(20, 100))])) == 2


def test_no_label_of_the_pages_calibration_plot_is_drawn_over_another():
    """The plot as the page shows it, from the records: each label's box on the canvas
    overlaps no other label's (two settings measured at the same frequency once did)."""
    from playground.incident import calibration, predictrecord, runrecords

    records, predictions = runrecords.load_all(), predictrecord.load_all()
    scored = edgescore.points(edgescore.SCORED, records, predictions)
    fig = calibration.figure(scored)
    assert len(chart_labels.texts(fig)) >= 2
    over = chart_labels.overlapping(fig)
    assert not over, over


def test_a_label_of_one_point_takes_its_colour_and_a_shared_one_stays_black():
    from matplotlib.colors import to_hex

    from playground.incident import calibration

    fig = calibration.figure([point("a", 0, 0), point("b", 5, 0), point("c", 60, 9)])
    ax = fig.axes[0]
    dots = [to_hex(line.get_color()) for line in ax.lines if line.get_marker() == "o"]
    colour = {t.get_text(): to_hex(t.get_color()) for t in ax.texts}
    assert colour["c: 9 of 12, P 0.60"] == dots[2] != "#000000"
    assert colour["a: 0 of 12, P 0.00\nb: 0 of 12, P 0.05"] == "#000000"


def test_a_rival_forecaster_of_the_same_repeats_is_scored_beside_the_model():
    from dataclasses import replace

    story = _story([0.5, 0.5, 0.5, 1.0])  # collapsed 3 of 4
    half = _model(0, 48, 96)  # P 0.5
    sure = replace(_model(0, 96, 96), run_id="20990101-000002-predict")  # P 1
    rival = ("always sure", [replace(SETTING, model=sure.run_id)])
    lines = edgescore.tables([SETTING], [story], [half, sure], rival=rival)
    assert lines[2:4] == ["| the model | 0.250 | 4 |", "| always sure | 0.250 | 4 |"]
    elsewhere = replace(SETTING, model=sure.run_id, measured=("20990101-000003-story",))
    other = replace(_story([1.0]), run_id="20990101-000003-story")
    with pytest.raises(RecordError, match="not scored on the same repeats"):
        edgescore.tables([SETTING], [story, other], [half, sure], rival=("x", [elsewhere]))

"""The model scored on what follows a collapse (incident/recoveryscore.py): a repeat counts as
not recovered only where it collapsed and no recovery was seen; the Brier scores by hand."""

from __future__ import annotations

import pytest

from playground.incident import edgescore, predictrecord, recoveryscore, runrecords
from playground.incident.predictrecord import PredictedTarget, PredictRecord
from playground.incident.runrecords import RunRecord, TargetRecord
from tests.unit.test_edgescore import SETTING


def _story(repeats: list[tuple[float, float | None, bool]]) -> RunRecord:
    """(share served during the incident, seconds to recover or None, generator valid)."""
    targets = [
        TargetRecord(
            name="gunicorn-threads", repeat=i + 1, visits_served_during=s, recovery_s=r, valid=v
        )
        for i, (s, r, v) in enumerate(repeats)
    ]
    return RunRecord(run_id="20990101-000000-story", kind="story", targets=targets)


def _model(not_recovered: int, draws: int) -> PredictRecord:
    t = PredictedTarget(
        name="gunicorn-threads",
        draws=draws,
        held=draws - not_recovered,
        collapsed=0,
        not_recovered=not_recovered,
    )
    return PredictRecord(run_id="20990101-000001-predict", kind="predict", targets=[t])


def test_only_a_collapse_with_no_recovery_seen_counts_and_only_trusted_repeats():
    story = _story(
        [
            (0.5, None, True),  # collapsed, not back: counts
            (0.5, 9.0, True),  # collapsed, back in 9 s: recovered
            (0.99, None, True),  # held: its recovery is not asked
            (0.2, None, False),  # the generator fell behind: not trusted
        ]
    )
    (point,) = recoveryscore.points([SETTING], [story], [_model(24, 96)])
    assert (point.measured.k, point.measured.n) == (1, 3)
    assert point.draws.share == pytest.approx(0.25)
    assert point.off == pytest.approx(0.25 - 1 / 3)


def test_the_brier_scores_are_the_models_and_the_references_computed_by_hand():
    story = _story([(0.5, None, True)] * 3 + [(0.5, 4.0, True)])  # 3 of 4 not back
    lines = recoveryscore.tables([SETTING], [story], [_model(0, 96)])  # P = 0
    scores = {line.split(" | ")[0][2:]: float(line.split(" | ")[1]) for line in lines[2:6]}
    assert scores["the model"] == pytest.approx(0.75)  # 3 of 4 wrong by 1
    assert scores["a coin: always a half"] == pytest.approx(0.25)
    assert scores["the base rate of these repeats"] == pytest.approx(0.1875, abs=1e-3)
    assert scores["the floor: each setting's own frequency"] == pytest.approx(0.1875, abs=1e-3)
    assert lines[-1] == "| gthread at 2 s | 3 of 4 (30-95 %) | 0.00 (0.00-0.04) | -0.75 |"


def test_predicts_lines_name_the_worst_setting_of_the_target_and_nothing_without_one(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(edgescore, "SCORED", (SETTING,))
    monkeypatch.setattr(runrecords, "load_all", lambda directory: [_story([(0.5, 3.0, True)])])
    monkeypatch.setattr(predictrecord, "load_all", lambda directory: [_model(96, 96)])
    lines = recoveryscore.error_lines("gunicorn-threads", directory=tmp_path)
    assert lines[0].endswith("off by +1.00 at gthread at 2 s,")
    assert "0 of 1 (0-79 %) did not come back; Brier 1.000, base rate 0.000" in lines[1]
    assert all(len(line) <= 76 for line in lines)  # indented and bracketed, within 80
    assert recoveryscore.error_lines("uwsgi-threads", directory=tmp_path) == []
    monkeypatch.setattr(runrecords, "load_all", lambda directory: [])
    assert recoveryscore.error_lines("gunicorn-threads", directory=tmp_path) == []

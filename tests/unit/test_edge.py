"""What decides a collapse at a pool's edge (incident/edge.py): each candidate's AUC over the
repeats, and docs/predict.md's tables of them, re-derived from the records in docs/runs/."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from playground.incident import edge, runrecords
from playground.incident.mechanism import Mechanism
from playground.incident.runrecords import RunRecord, TargetRecord
from playground.predict import validation


def test_the_auc_is_the_chance_a_collapsed_repeat_scores_above_a_held_one():
    assert edge.auc([3, 4, 1, 2], [True, True, False, False]).value == 1.0
    assert edge.auc([1, 2, 3, 4], [True, True, False, False]).value == 0.0
    assert edge.auc([1, 1, 1, 1], [True, True, False, False]).value == 0.5  # ties: a half
    # 3 collapsed x 2 held = 6 pairs; 5 and 4 beat both held, 2 beats 1 and loses to 3
    a = edge.auc([5, 2, 4, 1, 3], [True, True, True, False, False])
    assert a.value == pytest.approx(5 / 6)
    assert edge.auc([5, 3, 4, 1, 3], [True, True, True, False, False]).value == pytest.approx(
        5.5 / 6
    )  # a tie with the held 3 counts a half
    assert (a.collapsed, a.held) == (3, 2)
    assert edge.auc([1, 2], [True, True]) is None  # nobody held: no pair to order


def test_the_interval_is_hanley_and_mcneils_and_narrows_with_more_repeats():
    a = edge.auc([5, 2, 4, 1, 3], [True, True, True, False, False])
    q1, q2 = a.value / (2 - a.value), 2 * a.value**2 / (1 + a.value)
    se = math.sqrt((a.value * (1 - a.value) + 2 * (q1 - a.value**2) + 1 * (q2 - a.value**2)) / 6)
    assert a.low == pytest.approx(max(0.0, a.value - 1.959964 * se), abs=1e-5)
    assert a.high == pytest.approx(min(1.0, a.value + 1.959964 * se), abs=1e-5)
    assert not a.predicts()  # five repeats cannot show it
    many = edge.auc([5, 2, 4, 1, 3] * 6, [True, True, True, False, False] * 6)
    assert many.high - many.low < a.high - a.low
    # a perfect split of a few repeats is not certain: its interval keeps a width
    perfect = edge.auc([3, 4, 5, 1, 2, 2, 1, 2, 1, 2, 1, 2], [True] * 3 + [False] * 9)
    assert perfect.value == 1.0 and perfect.high == 1.0
    assert 0.5 < perfect.low < 0.99


def test_spearmans_rank_correlation_and_its_interval():
    rho, low, high = edge.spearman([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1])
    assert rho == pytest.approx(-1.0)
    rho, low, high = edge.spearman([1, 2, 3, 4, 5, 6, 7, 8], [2, 1, 4, 3, 6, 5, 8, 7])
    assert rho == pytest.approx(1 - 6 * 8 / (8 * 63))  # eight swaps of one rank each
    assert low < rho < high < 1
    # ties take their mean rank: x's two 2s share rank 2.5
    assert edge.spearman([1, 2, 2, 4], [1, 2, 3, 4])[0] == pytest.approx(0.9486833)
    assert edge.spearman([1, 1, 1, 1], [1, 2, 3, 4]) is None  # no spread
    assert edge.spearman([1, 2, 3], [1, 2, 3]) is None  # too few pairs


def _record(run_id: str, settings: dict, shares: list[tuple[float, float]], *, valid=True):
    targets = [
        TargetRecord(
            name="gunicorn-threads",
            repeat=i + 1,
            visits_served_during=served,
            valid=valid,
            mechanism=Mechanism(busiest_share_begun_before=share),
        )
        for i, (share, served) in enumerate(shares)
    ]
    return RunRecord(run_id=run_id, kind="story", settings=settings, targets=targets)


def test_the_table_counts_only_trusted_repeats_at_its_setting_and_says_which_predict():
    split = [(0.70, 0.40), (0.66, 0.50), (0.60, 0.90), (0.52, 1.0), (0.51, 0.99), (0.55, 0.97)]
    records = [
        _record("20990101-000000-story", {}, split * 3),
        _record("20990101-010000-story", {"incident_delay": 2.5}, [(0.5, 0.1)]),  # elsewhere
        _record("20990101-020000-story", {}, [(0.5, 0.1)], valid=False),  # not trusted
    ]
    found = edge.repeats(records, target="gunicorn-threads", incident_delay=2.0)
    assert len(found) == 18 and sum(r.collapsed for r in found) == 9
    lines = edge.table(found, label="gthread at 2 s")
    assert lines[0] == "gthread at 2 s: collapsed in 9 of 18 (29-71 %) repeats."
    (share,) = [line for line in lines if "`busiest_share_begun_before`" in line]
    assert share.startswith("| `busiest_share_begun_before` | 0.52 | 0.66 | 1.00 (")
    assert "| yes | -0." in share  # the higher the share, the fewer visits served
    (empty,) = [line for line in lines if "`steal_share`" in line]
    assert empty == "| `steal_share` | - | - | - | - | - |"


def test_the_pages_mechanism_and_score_tables_are_the_records_counted_again():
    records = runrecords.load_all()
    page = validation.PAGE.read_text()
    made = validation.page_tables(records)
    assert {"mechanism-gthread", "mechanism-uwsgi", "edge-scores"} <= set(made)
    assert validation.written(page, made) == page


def test_a_changed_repeat_changes_the_pages_table():
    records = runrecords.load_all()
    made = edge.page_tables(records)
    found = edge.repeats(records, target="gunicorn-threads", incident_delay=2.0)
    if not found:
        pytest.fail("no gthread repeats at 2 s with their candidates in docs/runs/")
    first = found[0]
    flipped = [
        replace(
            r,
            targets=[
                replace(t, visits_served_during=1.0 - (t.visits_served_during or 0))
                if r.run_id == first.run_id and t.repeat == first.target.repeat
                else t
                for t in r.targets
            ],
        )
        for r in records
    ]
    assert edge.page_tables(flipped)["mechanism-gthread"] != made["mechanism-gthread"]

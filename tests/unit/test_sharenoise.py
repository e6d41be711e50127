"""The split between gthread's workers against counting's own spread (incident/sharenoise.py)."""

from __future__ import annotations

import math
from dataclasses import replace

from playground.incident import edge, runrecords, sharenoise
from playground.incident.sharenoise import Spread


def test_counting_alone_is_the_binomial_spread_at_the_usual_repeats_mean():
    s = Spread(shares=(0.68, 0.70, 0.72, 0.52), counted=900)
    assert s.usual == (0.68, 0.70, 0.72)  # the even split is a regime apart
    assert math.isclose(s.counting_sd() or 0, math.sqrt(0.7 * 0.3 / 900))
    assert math.isclose(s.sd() or 0, 0.02)
    assert math.isclose(s.beyond() or 0, math.sqrt(0.02**2 - 0.7 * 0.3 / 900))


def test_a_spread_counting_covers_leaves_nothing_beyond_it():
    s = Spread(shares=(0.695, 0.700, 0.705), counted=900)
    assert (s.sd() or 1) < (s.counting_sd() or 0)
    assert s.beyond() == 0.0
    assert Spread(shares=(0.7,), counted=900).beyond() is None


def test_each_repeat_counts_the_requests_the_story_sends_before_its_incident():
    records = runrecords.load_all()
    setting = edge.EDGE_SETTINGS[0]
    found = setting.repeats(records)
    assert found, "no gthread repeats at 2 s with their candidates in docs/runs/"
    assert sharenoise.spread(found, records).counted == 60 * 15


def test_the_table_moves_with_a_repeats_share():
    records = runrecords.load_all()
    made = sharenoise.table(records)
    first = edge.EDGE_SETTINGS[0].repeats(records)[0]
    moved = [
        replace(
            r,
            targets=[
                replace(t, mechanism=replace(t.mechanism, busiest_share_begun_before=0.9))
                if (r.run_id, t.name, t.repeat)
                == (first.run_id, first.target.name, first.target.repeat)
                and t.mechanism
                else t
                for t in r.targets
            ],
        )
        for r in records
    ]
    assert sharenoise.table(moved) != made


def test_the_steal_table_moves_a_repeat_to_the_band_of_its_steal():
    records = runrecords.load_all()
    made = sharenoise.steal_table(records)
    quiet = next(
        (r.run_id, t.repeat)
        for r in records
        for t in r.targets
        if t.name == "gunicorn-threads" and t.valid and t.mechanism
        if (t.mechanism.steal_share or 1) < 0.005 and t.mechanism.busiest_share_begun_before
    )
    moved = [
        replace(
            r,
            targets=[
                replace(t, mechanism=replace(t.mechanism, steal_share=0.5))
                if (r.run_id, t.repeat) == quiet and t.name == "gunicorn-threads" and t.mechanism
                else t
                for t in r.targets
            ],
        )
        for r in records
    ]
    after = sharenoise.steal_table(moved)
    count = {
        row.split(" | ")[0]: int(row.split(" | ")[1]) for row in made[2:] if row.startswith("| ")
    }
    count_after = {
        row.split(" | ")[0]: int(row.split(" | ")[1]) for row in after[2:] if row.startswith("| ")
    }
    assert count_after["| 0-0.5 %"] == count["| 0-0.5 %"] - 1
    assert count_after["| 10-100 %"] == count.get("| 10-100 %", 0) + 1

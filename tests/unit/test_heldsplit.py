"""How gthread's two workers share a full pool, by front (incident/heldsplit.py), read from the
committed records the model's rule behind HAProxy rests on (predict/measured.py)."""

from __future__ import annotations

from dataclasses import replace

from playground.core import records
from playground.incident import heldsplit, runrecords
from playground.predict import measured


def _load(run: str) -> runrecords.RunRecord:
    return runrecords.load(records.RECORDS_DIR / f"{run}.json")


def test_behind_haproxy_the_busiest_worker_holds_near_half_a_full_pool_and_behind_nginx_its_share():
    behind = [
        s
        for run in measured.FREE_THREAD_RUNS
        for s in heldsplit.shares(_load(run), "gunicorn-threads+haproxy")
    ]
    assert len(behind) >= 13
    # Whatever it began before (up to 0.61), it held at most 0.57 once the pool was full ...
    assert max(s.before for s in behind) > 0.6 and max(s.held for s in behind) < 0.58
    # ... where behind nginx it held about what it began, well past half.
    nginx = heldsplit.shares(_load(measured.FIT_RUNS["gunicorn-threads"]), "gunicorn-threads")
    assert sorted(s.held for s in nginx)[len(nginx) // 2] > 0.65


def test_the_pages_table_moves_with_its_records():
    second = measured.FREE_THREAD_RUNS[-1]
    record = _load(second)
    lines = heldsplit.table([(record, "gunicorn-threads+haproxy")])
    row = next(line for line in lines if line.startswith(f"| {second} "))
    assert "| 3 |" in row and "3 of 3" in row
    fuller = replace(
        record,
        targets=[
            replace(t, mechanism=replace(t.mechanism, busiest_share_held_onset=0.7))
            for t in record.targets
        ],
    )
    moved = heldsplit.table([(fuller, "gunicorn-threads+haproxy")])
    assert "0.70 (0.70-0.70)" in moved[-1] and "0 of 3" in moved[-1]
    # A target the run did not measure gives no row.
    assert heldsplit.table([(record, "gunicorn-threads")]) == lines[:2]

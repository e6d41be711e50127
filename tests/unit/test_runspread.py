"""The same setting from run to run (incident/runspread.py): each run's collapses and what its
repeats measured before the incident, read from records; the page's runs re-derived."""

from __future__ import annotations

from playground.incident import runrecords, runspread
from playground.incident.mechanism import Mechanism
from playground.incident.runrecords import RunRecord, TargetRecord


def _run(run_id: str, delay: float, served: list[float], cpu: list[float], **extra) -> RunRecord:
    targets = [
        TargetRecord(
            name="gunicorn-threads",
            repeat=i + 1,
            visits_served_during=s,
            valid=True,
            mechanism=Mechanism(cpu_ms_per_request_before=c, steal_share=0.001 * (i + 1)),
        )
        for i, (s, c) in enumerate(zip(served, cpu, strict=True))
    ]
    settings = {"incident_delay": delay, **extra}
    return RunRecord(run_id=run_id, kind="story", settings=settings, targets=targets)


def test_each_run_counts_its_own_collapses_and_reads_its_own_repeats():
    fast = _run("20990101-000000-story", 1.7, [1.0, 1.0, 0.8], [2.0, 2.4, 2.2])
    slow = _run("20990102-000000-story", 1.7, [0.8, 0.8, 0.8, 1.0], [3.0, 3.6, 3.2, 3.4])
    rows = runspread.table([slow, fast])
    assert rows[2] == (
        "| 20990101-000000-story | 1.7 s | 1 of 3 (6-79 %) | 2.20 (2.00-2.40) | - | - | 0.3 % |"
    )
    assert rows[3].startswith(
        "| 20990102-000000-story | 1.7 s | 3 of 4 (30-95 %) | 3.30 (3.00-3.60)"
    )


def test_runs_too_short_or_at_other_settings_are_left_out_and_delays_come_in_order():
    kept = _run("20990101-000000-story", 1.8, [0.8] * 3, [3.0] * 3)
    earlier = _run("20990103-000000-story", 1.6, [1.0] * 3, [3.0] * 3)
    short = _run("20990102-000000-story", 1.7, [0.8, 1.0], [3.0, 3.0])
    other = _run("20990104-000000-story", 1.7, [0.8] * 3, [3.0] * 3, rate=40.0)
    off_delay = _run("20990105-000000-story", 1.9, [0.8] * 3, [3.0] * 3)
    found = runspread.runs([kept, short, other, off_delay, earlier])
    assert [(r.run_id, r.incident_delay) for r in found] == [
        ("20990103-000000-story", 1.6),
        ("20990101-000000-story", 1.8),
    ]


def test_the_pages_runs_at_gthreads_delay_where_repeats_split_are_read_from_their_records():
    rows = {r.run_id: r for r in runspread.runs(runrecords.load_all())}
    assert rows["20261204-020119-story"].collapsed.text().startswith("12 of 15")
    assert rows["20261204-220225-story"].collapsed.text().startswith("3 of 15")
    assert rows["20261128-151053-story"].collapsed.text().startswith("3 of 12")
    assert rows["20261205-030154-story"].collapsed.text().startswith("15 of 15")

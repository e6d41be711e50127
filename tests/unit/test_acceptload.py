"""Whether the busiest worker takes fewer connections the more it holds (incident/acceptload.py)."""

from __future__ import annotations

import math

from playground.incident import acceptload
from playground.incident.acceptload import Bin
from playground.incident.captured import AppTiming


def _bins(slope: float, *, a: float = 0.8, n: int = 1000) -> list[Bin]:
    out = []
    for lead in range(10, 50, 4):
        p = 1 / (1 + math.exp(-(a + slope * (lead - 10) / 10)))
        out.append(Bin(lead=lead, busiest=round(n * p), taken=n))
    return out


def test_the_slope_is_the_log_odds_per_pool_of_lead_the_counts_were_made_with():
    assert math.isclose(acceptload.slope(_bins(-1.5), reference=10) or 0, -1.5, abs_tol=0.02)
    flat = acceptload.slope(_bins(0.0), reference=10)
    assert flat is not None and math.isclose(flat, 0.0, abs_tol=0.02)


def test_no_slope_without_a_spread_in_the_lead_or_without_bins():
    same = [Bin(lead=12, busiest=40, taken=60)] * 10
    assert acceptload.slope(same, reference=12) is None
    assert acceptload.slope([], reference=0) is None


def _t(i: int, pid: int, began: float, ended: float) -> AppTiming:
    return AppTiming(f"r{i}", pid, began, None, None, ended)


def test_a_second_takes_what_each_held_and_what_each_accepted_in_it():
    """Accepted in second t: what a worker holds at t + 1, less what it held at t, plus the
    requests it ended in t (each on a connection of its own)."""
    t0 = 1000.0
    timings = [
        _t(1, 9, t0 + 0.1, t0 + 1.5),  # pid 9 ends one in second 1
        _t(2, 7, t0 + 0.2, t0 + 1.2),  # pid 7 ends one in second 1
        _t(3, 7, t0 + 0.3, t0 + 1.7),  # and another
        _t(4, 7, t0 + 0.4, t0 + 3.0),
    ]
    pids = acceptload.pair(timings, lo=t0, hi=t0 + 1)
    assert pids == (7, 9)  # pid 7 began the most
    held = [[5, 2], [6, 2], [4, 3], None]  # in order of pid: 7, then 9
    found = acceptload.bins(held, timings, pids, t0_wall=t0, lo=0, hi=3)
    # second 0: 7 took 1, 9 took 0; second 1: 7 took 4 - 6 + 2 = 0, 9 took 3 - 2 + 1 = 2;
    # second 2: its next second was not sampled.
    assert found == [
        Bin(lead=3, busiest=1, taken=1, second=0, busiest_ended=0, other_ended=0, fullest=6),
        Bin(lead=4, busiest=0, taken=2, second=1, busiest_ended=2, other_ended=1, fullest=6),
    ]
    assert acceptload.pair(timings[1:3], lo=t0, hi=t0 + 1) is None  # one process only


def test_the_pages_table_is_the_measured_runs_repeats_and_says_the_median_as_a_share():
    from dataclasses import replace

    from playground.incident import runrecords

    (record,) = [r for r in runrecords.load_all() if r.run_id == acceptload.MEASURED_RUN]
    made = acceptload.table(record)
    slopes = [t.mechanism.accept_slope for t in record.targets if t.valid and t.mechanism]
    assert len(made) == 2 + len([s for s in slopes if s is not None]) + 2
    steeper = replace(
        record,
        targets=[
            replace(t, mechanism=replace(t.mechanism, accept_slope=-1.0)) if t.mechanism else t
            for t in record.targets
        ],
    )
    assert "moves a share of" in made[-1]
    assert acceptload.table(steeper)[-1] != made[-1]

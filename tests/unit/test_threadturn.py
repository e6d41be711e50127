"""A full uWSGI pool's time per request beyond the delay (incident/threadturn.py), and the
model's threads that hold each request for it (predict/app.py, predict/measured.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from playground.core import records
from playground.core.scenarios import resolve_story
from playground.incident import runrecords, threadturn
from playground.incident.captured import AppTiming
from playground.incident.settings import StorySettings
from playground.predict import measured
from playground.predict.run import predict_target
from playground.predict.system import system_for


@dataclass
class Row:
    busy_cores: int | None = 4
    cores: int | None = 4
    listen_queue: int | None = 3
    timeouts: int = 0


def _pool(*, threads: int = 4, delay: float = 1.0, view: float, between: float, until: float):
    """Each of `threads` threads back to back from the incident's start (t0 + 10): a view of
    `view` s, then `between` s before the next; every view its own request."""
    timings, n = [], 0
    for k in range(threads):
        t = 10.0 + k * (view + between) / threads
        while t < until:
            timings.append(AppTiming(f"r{n}", 1, t, t, t + delay, t + view))
            t += view + between
            n += 1
    return timings


@pytest.mark.parametrize("view, between", [(1.003, 0.0), (1.003, 0.007), (1.0, 0.02)])
def test_the_turn_is_the_views_time_and_the_time_between_them_beyond_the_delay(view, between):
    rows = [Row() for _ in range(60)]
    timings = _pool(view=view, between=between, until=45.0)
    got = threadturn.turn_beyond_ms(
        timings, rows, t0_wall=0.0, start_s=10.0, incident_s=30.0, incident_delay=1.0
    )
    assert got == pytest.approx(1000 * (view + between - 1.0), abs=0.5)


def test_no_turn_where_the_pool_was_not_full_or_the_stats_are_missing():
    timings = _pool(view=1.01, between=0.0, until=45.0)
    kwargs = dict(t0_wall=0.0, start_s=10.0, incident_s=30.0, incident_delay=1.0)
    idle = [Row(listen_queue=0) for _ in range(60)]  # nothing waiting: threads may be idle
    assert threadturn.turn_beyond_ms(timings, idle, **kwargs) is None
    gthread = [Row(busy_cores=None, cores=None) for _ in range(60)]  # no uWSGI stats
    assert threadturn.turn_beyond_ms(timings, gthread, **kwargs) is None
    brief = [Row(listen_queue=1 if 20 <= t < 23 else 0) for t in range(60)]
    assert threadturn.turn_beyond_ms(timings, brief, **kwargs) is None


def test_the_turn_is_read_before_the_first_user_gave_up():
    """Seconds after a user timed out are left out: there the threads are quicker (here 5 ms
    beyond the delay against 20 before), and they would pull the figure down."""
    before = _pool(view=1.02, between=0.0, until=30.0)
    after = [
        replace(t, request_id=f"a{i}", began=t.began + 20, ended=t.began + 20 + 1.005)
        for i, t in enumerate(_pool(view=1.005, between=0.0, until=25.0))
    ]
    rows = [Row(timeouts=5 if t >= 30 else 0) for t in range(60)]
    got = threadturn.turn_beyond_ms(
        before + after, rows, t0_wall=0.0, start_s=10.0, incident_s=30.0, incident_delay=1.0
    )
    assert got == pytest.approx(20.0, abs=1.0)


def test_the_model_holds_a_uwsgi_thread_for_the_measured_turn_and_serves_less_for_it():
    """uWSGI's fit run measured a turn above the app's CPU, so the model's pool answers fewer
    a second at the edge and serves fewer of the visits during the incident than with the CPU
    alone; a draw's turn is one of the measured ones moved by the kernel, and a gthread pool
    has none."""
    target = resolve_story(["uwsgi-threads"])[0]
    settings = StorySettings(incident_delay=2.28)
    system = system_for(target, settings)
    measured_turns = measured.turns_beyond_s("uWSGI", "threads")
    assert measured_turns and system.turn_beyond_s is not None
    assert system.turn_beyond_s > system.cpu_s  # what makes the change: longer than the CPU
    drawn = [system_for(target, replace(settings, system_seed=k)).turn_beyond_s for k in range(40)]
    assert len(set(drawn)) > 30  # each draw its own
    assert min(measured_turns) - 0.005 < min(drawn) and max(drawn) < max(measured_turns) + 0.005
    assert system_for(resolve_story(["gunicorn-threads"])[0], settings).turn_beyond_s is None

    with_turn = predict_target(target, settings).summary
    original = measured.TURN_FIT_RUNS
    try:
        measured.TURN_FIT_RUNS = {}
        measured.turns_beyond_s.cache_clear()
        without = predict_target(target, settings).summary
    finally:
        measured.TURN_FIT_RUNS = original
        measured.turns_beyond_s.cache_clear()
    assert with_turn is not None and without is not None
    assert with_turn.goodput_during < without.goodput_during - 1
    assert with_turn.visits_served_during < without.visits_served_during - 0.01


def test_the_pages_table_is_the_fit_runs_turns_and_moves_with_them():
    (run,) = measured.TURN_FIT_RUNS[("uWSGI", "threads")]
    record = runrecords.load(records.RECORDS_DIR / f"{run}.json")
    turns = sorted(t.mechanism.thread_turn_ms for t in record.targets if t.mechanism)
    lines = threadturn.table([record], cpu_ms=2.5)
    assert f"Median over 3 repeats: {turns[1]:g} ms" in lines[-1]
    assert sum(line.startswith(f"| {run} ") for line in lines) == 3
    longer = replace(
        record,
        targets=[
            replace(
                t, mechanism=replace(t.mechanism, thread_turn_ms=t.mechanism.thread_turn_ms + 5)
            )
            for t in record.targets
        ],
    )
    assert f"{turns[1] + 5:g} ms" in threadturn.table([longer], cpu_ms=2.5)[-1]

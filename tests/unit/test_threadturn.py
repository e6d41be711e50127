"""A full pool's time per request beyond the delay (incident/threadturn.py), uWSGI's and
Gunicorn's behind HAProxy, and the model's threads that hold each request for it
(predict/app.py, predict/measured.py)."""

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


def _with_and_without_turns(target, settings):
    """The model's summaries of one run of `target`: with the measured turns, and with no fit
    run of any turn (the app's CPU alone holds a thread beyond the delay)."""
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
    return with_turn, without


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

    with_turn, without = _with_and_without_turns(target, settings)
    assert with_turn.goodput_during < without.goodput_during - 1
    assert with_turn.visits_served_during < without.visits_served_during - 0.01


def test_the_pages_table_is_the_fit_runs_turns_and_moves_with_them():
    (run,) = measured.TURN_FIT_RUNS[("uWSGI", "threads", "nginx")]
    record = runrecords.load(records.RECORDS_DIR / f"{run}.json")
    turns = sorted(t.mechanism.thread_turn_ms for t in record.targets if t.mechanism)
    lines = threadturn.table([record], cpu_ms={"uwsgi-threads": 2.5})
    assert f"uwsgi-threads: median over 3 repeats {turns[1]:g} ms" in lines[-1]
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
    assert f"{turns[1] + 5:g} ms" in threadturn.table([longer], cpu_ms={"uwsgi-threads": 2.5})[-1]


@dataclass
class GunicornRow:
    """A second of Gunicorn's samples: connections per worker and nginx's, no uWSGI stats."""

    worker_connections: list[int] | None = None
    nginx_active: int | None = 20
    timeouts: int = 0


@pytest.mark.parametrize("between", [0.0, 0.02])
def test_behind_haproxy_gunicorns_pool_is_full_while_each_worker_holds_its_threads(between):
    """Two workers of 2 threads each, every thread back to back: where each worker holds its
    threads' worth of connections and nginx holds more than the pool, the turn is read; where
    one worker holds fewer than its threads (nginx alone: the split), or nothing waits, it is
    not."""
    timings = _pool(view=1.003, between=between, until=45.0)
    kwargs = dict(t0_wall=0.0, start_s=10.0, incident_s=30.0, incident_delay=1.0, per_worker=2)
    full = [GunicornRow(worker_connections=[2, 2], nginx_active=7) for _ in range(60)]
    got = threadturn.turn_beyond_ms(timings, full, **kwargs)
    assert got == pytest.approx(1000 * (0.003 + between), abs=0.5)
    split = [GunicornRow(worker_connections=[6, 1], nginx_active=7) for _ in range(60)]
    assert threadturn.turn_beyond_ms(timings, split, **kwargs) is None
    nothing_waits = [GunicornRow(worker_connections=[2, 2], nginx_active=4) for _ in range(60)]
    assert threadturn.turn_beyond_ms(timings, nothing_waits, **kwargs) is None
    assert threadturn.turn_beyond_ms(timings, full, **{**kwargs, "per_worker": None}) is None


def test_the_model_holds_a_gthread_thread_behind_haproxy_for_its_turn_and_tips_earlier():
    """Behind HAProxy the fit run measured a turn of some 45 ms where the app's CPU is 3 ms:
    at 2.25 s, where the fit run's three repeats collapsed, the model's pool with the turn
    collapses, and with the CPU alone it holds; behind nginx gthread keeps no turn."""
    target = resolve_story(["gunicorn-threads+haproxy"])[0]
    settings = StorySettings(incident_delay=2.25, system_seed=1)
    system = system_for(target, settings)
    found = measured.turns_beyond_s("Gunicorn", "threads", "haproxy")
    assert len(found) == 3 and system.turn_beyond_s is not None
    assert system.turn_beyond_s > 10 * system.cpu_s
    assert measured.turns_beyond_s("Gunicorn", "threads", "nginx") == ()

    with_turn, without = _with_and_without_turns(target, settings)
    assert with_turn.visits_served_during < 0.95 <= without.visits_served_during

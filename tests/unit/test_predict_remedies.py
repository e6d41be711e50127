"""The model's remedies that move where a connection waits: HAProxy's bounded queue between
nginx and the app, Gunicorn's reuse_port (a socket per worker), uWSGI's thunder-lock."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import example, given
from hypothesis import settings as examples
from hypothesis import strategies as st

from playground.cli import main
from playground.core.scenarios import resolve_story
from playground.incident import analysis, held
from playground.incident.settings import StorySettings
from playground.incident.targetresults import Incident
from playground.predict import schedule
from playground.predict.haproxy import Queue
from playground.predict.run import arrivals, predict_target
from playground.predict.servers import Connection, Server
from playground.predict.simulate import Simulation
from playground.predict.system import HAProxy, _haproxy_time, system_for
from tests.conftest import load_module

_APP_REMEDIES = load_module("budget_remedies", "flask_app/remedies.py")


def _system(name: str, settings: StorySettings | None = None):
    (target,) = resolve_story([name])
    return system_for(target, settings or StorySettings())


def test_the_remedies_are_read_from_their_own_files():
    haproxy = _system("gunicorn-threads+haproxy", StorySettings(workers=3, threads=8))
    # maxconn "${POOL}" with POOL: ${STORY_THREADS_ALL}, the story's workers x threads.
    assert haproxy.haproxy == HAProxy(maxconn=24, queue_timeout=2.0, abort_on_close=True)
    assert _system("uwsgi-threads+haproxy").haproxy == HAProxy(128, 2.0, True)
    reuse = _system("gunicorn-threads+reuse-port")
    assert reuse.reuse_port and reuse.busiest_share is None
    plain = _system("gunicorn-threads")
    assert not plain.reuse_port and plain.haproxy is None and plain.busiest_share is not None
    # thunder-lock changes which uWSGI process wakes, nothing the model holds.
    assert replace(_system("uwsgi-threads+thunder-lock"), name="x") == replace(
        _system("uwsgi-threads"), name="x"
    )


@pytest.mark.parametrize(("text", "seconds"), [("2s", 2.0), ("2000", 2.0), ("1m", 60.0)])
def test_haproxys_times_are_read_in_its_units(text, seconds):
    assert _haproxy_time(text) == seconds


def test_haproxys_queue_passes_maxconn_and_queues_the_rest_in_order():
    q = Queue(HAProxy(maxconn=2, queue_timeout=2.0, abort_on_close=True))
    assert [q.arrive(rid, 0.0) for rid in "abcde"] == [True, True, False, False, False]
    assert q.expired("c") and not q.expired("c")
    assert q.closed("d") and not q.closed("a")
    assert q.answered() == "e" and q.in_flight == 2
    assert q.answered() is None and q.in_flight == 1
    patient = Queue(HAProxy(maxconn=1, queue_timeout=2.0, abort_on_close=False))
    assert patient.arrive("a", 0.0) and not patient.arrive("b", 0.0)
    assert not patient.closed("b") and patient.answered() == "b"


def _overloaded(haproxy: HAProxy | None, *, timeout: float = 10.0, name: str = "gunicorn-threads"):
    """2 x 2 threads (Gunicorn's by default), the third party at 1 s, 8 visits/s (twice what
    they serve), users who do not reload, no health checks; the most connections the app held
    at once."""
    system = replace(
        _system(name), workers=2, per_worker=2, cpu_s=0.0, turn_beyond_s=None, checks=()
    )
    system = replace(system, haproxy=haproxy)
    s = StorySettings(rate=8.0, timeout=timeout, max_attempts=1, before_s=30, incident_s=1)
    s = replace(s, after_s=0)
    arrivals = schedule.arrival_times(rate=8.0, duration=30.0, arrival="constant", seed=1)
    sim = Simulation(system, s, delay=1.0, incident=False, upstream=lambda t: 1.0)
    most = [0]
    offer = sim.server.offer

    def counted(c, now):
        taken = offer(c, now)
        most[0] = max(most[0], sum(sim.server.held))
        return taken

    sim.server.offer = counted  # type: ignore[method-assign]
    return sim.run(arrivals), most[0]


def test_haproxy_never_passes_more_than_maxconn_and_answers_503_after_its_queue_timeout():
    records, most = _overloaded(HAProxy(maxconn=4, queue_timeout=2.0, abort_on_close=True))
    assert most == 4
    refused = [r for r in records.access if r.status == 503]
    assert len(refused) > 50
    assert all(r.request_time == pytest.approx(2.0) for r in refused)
    # Without it, Gunicorn's workers take every connection and queue it inside.
    _, unbounded = _overloaded(None)
    assert unbounded > 50


def _calls_for_nobody(records) -> int:
    """Calls to the third party that began after their user had given up."""
    gone = {f"{a.visit}.{a.attempt}": a.end for a in records.attempts if a.outcome == "timeout"}
    return sum(1 for c in records.calls if c.arrived_wall >= gone.get(c.request_id, 1e9))


def test_abortonclose_drops_a_queued_request_whose_user_has_gone():
    """Users who give up after 1.5 s, before the 2 s queue timeout: with abortonclose their
    requests leave the queue; without it they wait on, and the app calls the third party for
    them once they reach a slot. (uWSGI's pool: a thread takes a connection only when idle,
    so nothing waits inside the app once HAProxy has passed it on.)"""
    dropped, _ = _overloaded(HAProxy(4, 2.0, True), timeout=1.5, name="uwsgi-threads")
    kept, _ = _overloaded(HAProxy(4, 2.0, False), timeout=1.5, name="uwsgi-threads")
    assert not [r for r in dropped.access if r.status == 503]
    assert _calls_for_nobody(dropped) == 0
    assert _calls_for_nobody(kept) > 20


def test_with_reuse_port_each_connection_goes_to_a_worker_at_random():
    system = replace(_system("gunicorn-threads+reuse-port"), workers=2, per_worker=4)
    server = Server(system=system, rng=random.Random(5))
    workers = []
    for k in range(4000):
        c = Connection(rid=str(k), arrived=0.0)
        assert server.offer(c, 0.0)
        workers.append(c.worker)
        server.finish(c, 0.0)
    # Each worker idle every time: the hash alone decides, about half each.
    assert 0.47 < workers.count(0) / len(workers) < 0.53
    # ... where the shared socket gives the busiest worker its measured share, idle or not
    # (no answer keeps a main thread busy here: the kernel's choice alone).
    shared = Server(
        system=replace(system, reuse_port=False, busiest_share=0.7, accept_busy_s=None),
        rng=random.Random(5),
    )
    firsts = []
    for k in range(4000):
        c = Connection(rid=str(k), arrived=0.0)
        shared.offer(c, 0.0)
        firsts.append(c.worker)
        shared.finish(c, 0.0)
    assert firsts.count(0) / len(firsts) == pytest.approx(0.7, abs=0.03)


def test_with_reuse_port_a_full_workers_connections_wait_for_it_not_for_the_other():
    system = replace(
        _system("gunicorn-threads+reuse-port"), workers=2, per_worker=1, worker_connections=1
    )
    server = Server(system=system, rng=random.Random(1), start=lambda c: None)
    by_socket: dict[int, list[Connection]] = {0: [], 1: []}
    for k in range(40):
        c = Connection(rid=str(k), arrived=0.0)
        server.offer(c, 0.0)
        assert c.socket is not None
        by_socket[c.socket].append(c)
    first, waiting = by_socket[0][0], by_socket[0][1]
    assert len(server.backlogs[0]) == len(by_socket[0]) - 1
    # The other worker finishing does not take worker 0's waiting connections ...
    server.finish(by_socket[1][0], 1.0)
    assert waiting.started is None and len(server.backlogs[0]) == len(by_socket[0]) - 1
    # ... worker 0 does, in order.
    server.finish(first, 2.0)
    assert waiting.started == 2.0 and waiting.worker == 0


def test_behind_haproxy_a_connection_goes_to_a_worker_with_a_free_thread():
    haproxy = _system("gunicorn-threads+haproxy")
    assert haproxy.to_free_thread and not _system("gunicorn-threads").to_free_thread
    system = replace(haproxy, workers=2, per_worker=2, busiest_share=0.9)
    server = Server(system=system, rng=random.Random(3), start=lambda c: None)
    taken = []
    for k in range(4):
        c = Connection(rid=str(k), arrived=0.0)
        server.offer(c, 0.0)
        taken.append(c.worker)
    # The busiest worker fills first; the rest go to the free threads, not into its queue.
    assert sorted(taken) == [0, 0, 1, 1] and [len(q) for q in server.inside] == [0, 0]
    # Both full: the kernel's preference again, into a worker's own queue.
    firsts = []
    for k in range(4, 400):
        c = Connection(rid=str(k), arrived=0.0)
        server.offer(c, 0.0)
        firsts.append(c.worker)
    assert 0.8 < firsts.count(0) / len(firsts) < 0.97


def _held_at_onset(system, s: StorySettings) -> tuple[float, str]:
    """The busiest worker's mean share of the connections held over the incident's first 5 s,
    and the run's verdict."""
    sim = Simulation(system, s, delay=s.normal_delay, incident=True)
    shares: list[float] = []

    def probe() -> None:
        held = sim.server.held
        shares.append(max(held) / sum(held))
        if sim.clock.now < s.before_s + 5:
            sim.clock.after(0.25, probe)

    sim.clock.after(s.before_s + 2.5, probe)
    records = sim.run(arrivals(s), sampled=False)
    served, recovery = analysis.verdict_figures(
        records.attempts,
        incident=Incident(start=s.before_s, seconds=s.incident_s),
        arrivals_end=s.duration,
        seconds=int(s.duration) + 1,
    )
    return sum(shares) / len(shares), held.outcome(served, recovery)


def test_behind_haproxy_the_workers_hold_a_full_pool_evenly_and_it_holds():
    """gthread behind HAProxy at 2.1 s, its busiest worker given 0.6 of the new connections
    (run 20261204-133731-story began 0.56-0.61 before the incident, held 0.52 at its onset and
    held in 3 of 3): with the rule, near half each and the pool holds; with a fixed split,
    the busiest holds its share and the pool collapses."""
    s = StorySettings(incident_delay=2.1, busiest_share=0.6, system_seed=1)
    system = _system("gunicorn-threads+haproxy", s)
    share, verdict = _held_at_onset(system, s)
    assert share < 0.54 and verdict == held.HELD
    fixed_share, fixed_verdict = _held_at_onset(replace(system, to_free_thread=False), s)
    assert fixed_share > 0.57 and fixed_verdict != held.HELD


def test_thunder_lock_predicts_the_pool_as_it_is():
    plain = predict_target(*resolve_story(["uwsgi-threads"]), StorySettings(incident_delay=2.5))
    locked = predict_target(
        *resolve_story(["uwsgi-threads+thunder-lock"]), StorySettings(incident_delay=2.5)
    )
    assert locked.summary == plain.summary


def test_reuse_port_and_haproxy_are_predicted_unlike_the_pool_as_it_is(tmp_path, capsys):
    from playground.commands.kinds import runs

    names = ["gunicorn-threads", "gunicorn-threads+reuse-port", "gunicorn-threads+haproxy"]
    # At the share counted by hand, where the pool as it is collapses in one draw.
    argv = ["--draws", "1", "--busiest-share", "0.694", *names]
    assert main(["predict", "--results-dir", str(tmp_path), *argv]) == 0
    ((_, (_, run)),) = runs(tmp_path)
    summaries = {t.name.removeprefix("story-"): t.summary for t in run.targets}
    said = {n: held.outcome(s.visits_served_during, s.recovery_s) for n, s in summaries.items()}
    assert said["gunicorn-threads+reuse-port"] != said["gunicorn-threads"]
    # Behind HAProxy the workers share the full pool whatever the split (as measured).
    assert said["gunicorn-threads+haproxy"] == held.HELD != said["gunicorn-threads"]
    assert summaries["gunicorn-threads"].errors == 0


# The model's retry budget (predict/app.py) is a copy of the app's (flask_app/remedies.py,
# which runs inside the image and cannot import the runner): the same calls at the same
# times must get the same answers from both.
_BUDGET_CALLS = st.lists(
    st.tuples(st.sampled_from(["request", "allow"]), st.floats(min_value=0, max_value=3)),
    max_size=80,
)


@examples(max_examples=200, deadline=None)
# Ten deposits of 0.2 sum to a whisker below two: both must still allow two retries.
@example(calls=[("request", 0.0)] * 10 + [("allow", 0.0)] * 3, ratio=0.2, per_s=0.0)
@given(
    calls=_BUDGET_CALLS,
    ratio=st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]),
    per_s=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
)
def test_the_models_retry_budget_answers_as_the_apps_does(calls, ratio, per_s):
    from playground.predict.app import RetryBudget

    now = [0.0]
    app = _APP_REMEDIES.RetryBudget(ratio=ratio, per_s=per_s, clock=lambda: now[0])
    model = RetryBudget(ratio=ratio, per_s=per_s, now=0.0)
    for call, wait in calls:
        now[0] += wait
        if call == "request":
            app.request()
            model.request()
        else:
            assert model.allow(now[0]) == app.allow(), (call, now[0])

"""How long each answer keeps a gthread worker from accepting (incident/acceptbusy.py), and the
model's workers that lose connections while they are at it (predict/servers.py)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from playground.core.scenarios import resolve_story
from playground.incident import acceptbusy
from playground.incident.acceptload import Bin
from playground.incident.settings import StorySettings
from playground.predict.servers import Connection, Server
from playground.predict.system import system_for


def test_the_preference_is_the_share_taken_with_the_busy_time_taken_out():
    assert acceptbusy.taken_share(0.8, 0.0) == pytest.approx(0.8)
    assert acceptbusy.taken_share(0.8, 0.3) == pytest.approx(0.56)  # busier: it takes less
    for s0, u0 in [(0.8, 0.12), (0.7, 0.3), (0.55, 0.05)]:
        assert acceptbusy.preference(acceptbusy.taken_share(s0, u0), u0) == pytest.approx(s0)
    assert acceptbusy.preference(0.9, 0.5) == 1.0  # at most 1


def _bins(busy_ms: float, *, s0: float = 0.8, n: int = 2000) -> list[Bin]:
    """Seconds counted as the model says: 20 before the incident at 42 and 18 answers a
    second, then 40 whose answers go from the incident's pace to three times it."""
    out = []
    paces = [(42, 18)] * 20 + [(36, 40)] * 20 + [(90, 45)] * 20
    for second, (e0, e1) in enumerate(paces):
        p = acceptbusy.taken_share(s0, busy_ms / 1000 * e0)
        out.append(Bin(0, round(n * p), n, second, e0, e1))
    return out


@pytest.mark.parametrize("busy_ms", [0.0, 1.5, 3.5, 6.0])
def test_the_fit_finds_the_busy_time_the_counts_were_made_with(busy_ms):
    assert acceptbusy.busy_per_answer(_bins(busy_ms), start=20) == pytest.approx(busy_ms, abs=0.1)


def test_no_fit_without_seconds_before_or_quicker_answers_after_the_start():
    found = _bins(3.0)
    assert acceptbusy.busy_per_answer(found[:44], start=20) is None  # none past 42 a second
    assert acceptbusy.busy_per_answer(found[17:], start=20) is None


def _server(busy_s: float, share: float = 1.0) -> Server:
    (target,) = resolve_story(["gunicorn-threads"])
    system = replace(system_for(target, StorySettings(busiest_share=share)), accept_busy_s=busy_s)
    return Server(system=system, rng=random.Random(1))


def test_a_worker_busy_with_an_answer_loses_the_next_connection_to_the_other():
    """Preferred always (a share of 1): worker 0 takes every connection, until it has just
    answered one; then, while it is busy, the other takes the next, and after it, it again."""
    server = _server(0.004)
    first = Connection("a", 0.0)
    assert server.offer(first, 0.0) and first.worker == 0
    server.finish(first, 1.0)
    during, after = Connection("b", 1.001), Connection("c", 1.005)
    server.offer(during, 1.001)
    server.offer(after, 1.005)
    assert (during.worker, after.worker) == (1, 0)
    idle = _server(0.0)
    again = Connection("a", 0.0)
    idle.offer(again, 0.0)
    idle.finish(again, 1.0)
    then = Connection("b", 1.001)
    idle.offer(then, 1.001)
    assert then.worker == 0  # with no busy time the preference alone decides


def test_the_busiest_takes_less_of_the_new_connections_the_more_it_answers():
    """The more answers a second the busiest worker gives, the more often it is busy when a
    connection arrives and the smaller its share: the shape measured after the incident."""

    def share(rate: float) -> float:
        server, rng, t = _server(0.0035, 0.7), random.Random(5), 0.0
        ends: list[tuple[float, Connection]] = []
        taken = [0, 0]
        for i in range(20_000):
            t += rng.expovariate(rate)
            while ends and ends[0][0] <= t:
                end, c = ends.pop(0)
                server.finish(c, end)
            c = Connection(str(i), t)
            server.offer(c, t)
            taken[c.worker] += 1
            ends.append((t + 0.05, c))
            ends.sort(key=lambda e: e[0])
        return taken[0] / sum(taken)

    slow, quick = share(20.0), share(150.0)
    assert quick < slow - 0.1


def test_seconds_where_a_worker_was_at_its_limit_are_left_out():
    """A worker holding its `worker_connections` stops accepting whatever its answers: those
    seconds would read as a busy time of their own."""
    found = _bins(3.0)
    capped = [
        replace(b, busiest=0, fullest=acceptbusy.WORKER_CONNECTIONS) if b.second >= 45 else b
        for b in found
    ]
    assert acceptbusy.busy_per_answer(capped, start=20) == pytest.approx(3.0, abs=0.1)


def test_the_shares_taken_in_a_phase_leave_out_the_seconds_near_the_limit():
    found = [
        Bin(0, 7, 10, 0, 0, 0, 5),
        Bin(0, 6, 10, 1, 0, 0, 5),
        Bin(0, 0, 10, 2, 0, 0, acceptbusy.WORKER_CONNECTIONS),  # a worker at its limit
        Bin(0, 5, 10, 3, 0, 0, 5),
    ]
    assert acceptbusy.taken_between(found, 0, 2) == 0.65
    assert acceptbusy.taken_between(found, 2) == 0.5
    assert acceptbusy.taken_between(found, 4) is None

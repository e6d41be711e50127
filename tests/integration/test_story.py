"""The war story on a short schedule, for real: a thread pool collapses where gevent holds.

A small pool (2 x 8 threads) and an incident that needs far more than it has (30 visits/s x
2 s = 60 in flight), so the shape is unmistakable on a busy 2-core machine: during the incident
the thread pool's goodput is clearly below gevent's, and gevent's stays near the arrivals.
About two minutes: two modes, 30 s of load each, plus bringing them up and down.
"""

from __future__ import annotations

import json

import pytest

from playground import cli

pytestmark = pytest.mark.integration

SHORT = ["--rate", "30", "--workers", "2", "--threads", "8", "--async-cores", "200",
         "--normal-delay", "0.2", "--incident-delay", "2", "--before", "5", "--incident", "15",
         "--after", "10", "--timeout", "3", "--refresh-delay", "0.5", "--max-attempts", "3",
         "--quiet"]


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> dict:
    results_dir = tmp_path_factory.mktemp("story")
    code = cli.main(["story", "uwsgi-threads", "uwsgi-gevent", *SHORT,
                     "--results-dir", str(results_dir)])
    (path,) = results_dir.glob("*-story/story.json")
    data = json.loads(path.read_text())
    assert code == 0, [m.get("error") or m.get("adds_up") for m in data["modes"]]
    return {m["mode"]: m for m in data["modes"]}


def test_every_attempt_is_accounted_for_exactly_once(story):
    for mode, entry in story.items():
        assert entry["adds_up"] == [], mode
        s, rows = entry["summary"], entry["seconds"]
        assert sum(r["arrivals"] for r in rows) == s["visits"]
        assert sum(r["arrivals"] + r["refreshes"] for r in rows) == s["attempts"]
        assert sum(r["goodput"] + r["timeouts"] + r["errors"] for r in rows) == s["attempts"]


def test_the_thread_pool_collapses_where_gevent_holds(story):
    threads, gevent = story["uwsgi-threads"]["summary"], story["uwsgi-gevent"]["summary"]
    assert gevent["goodput_during"] >= 0.8 * gevent["arrivals_during"], gevent
    assert threads["goodput_during"] < 0.6 * gevent["goodput_during"], (threads, gevent)
    # Users who gave up came back: more attempts per visit than where nobody had to.
    assert threads["amplification"] > gevent["amplification"] + 0.2


def test_the_servers_were_watched(story):
    for mode, entry in story.items():
        sampled = [r for r in entry["seconds"] if r.get("nginx_active") is not None]
        assert len(sampled) > 20, mode
        assert any(r.get("busy_cores") for r in entry["seconds"]), mode
    # The pool was full: all 16 threads busy at once, and the gevent mode had more than that.
    assert story["uwsgi-threads"]["summary"]["peak_busy_cores"] == 16
    assert story["uwsgi-gevent"]["summary"]["peak_busy_cores"] > 16

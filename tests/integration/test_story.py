"""The war story on a short schedule, for real: a thread pool collapses where gevent holds.

A small pool (2 x 8 threads) and an incident that needs far more than it has (30 visits/s x
2 s = 60 in flight), so the shape is unmistakable on a busy 2-core machine: during the incident
the thread pool's goodput is clearly below gevent's, and gevent's stays near the arrivals.
About two minutes: two modes, 30 s of load each, plus bringing them up and down. The same
incident is then driven by ab (a closed loop, --closed-loop) on both modes (about a minute and
a half more), and a sweep of two offered rates runs on a thread mode with a pool of 8 and on a
gevent mode (about two minutes).
"""

from __future__ import annotations

import json

import pytest

from playground import cli

pytestmark = pytest.mark.integration

SHORT = [
    "--rate",
    "30",
    "--workers",
    "2",
    "--threads",
    "8",
    "--async-cores",
    "200",
    "--normal-delay",
    "0.2",
    "--incident-delay",
    "2",
    "--before",
    "5",
    "--incident",
    "15",
    "--after",
    "10",
    "--timeout",
    "3",
    "--refresh-delay",
    "0.5",
    "--max-attempts",
    "3",
    "--quiet",
]


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> dict:
    results_dir = tmp_path_factory.mktemp("story")
    code = cli.main(
        [
            "story",
            "uwsgi-threads",
            "uwsgi-gevent",
            *SHORT,
            "--closed-loop",
            "--results-dir",
            str(results_dir),
        ]
    )
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


def test_ab_through_the_same_incident_slows_down_instead_of_failing(story):
    """The closed loop hides the collapse: ab sends fewer requests while the third party is
    slow and almost none fail, where the open loop's users time out by the dozen."""
    for mode, entry in story.items():
        ab = entry["closed_loop"]
        assert ab["adds_up"] == [], mode
        per = {p["name"]: p for p in ab["phases"]}
        assert sum(p["requests"] for p in ab["phases"]) == ab["requests"] == ab["complete"]
        # 0.2 s -> 2 s: a closed loop of c connections sends far fewer requests meanwhile.
        assert per["during"]["per_s"] < 0.5 * per["before"]["per_s"], (mode, per)
        assert ab["failed"] + ab["non_2xx"] <= 0.02 * ab["requests"] + 2, (mode, ab)
    assert story["uwsgi-threads"]["summary"]["timeouts"] > 20


SWEEP = [
    "--workers",
    "2",
    "--threads",
    "4",
    "--async-cores",
    "200",
    "--sweep",
    "--no-incident",
    "--sweep-rates",
    "4,16",
    "--sweep-delay",
    "1",
    "--sweep-warmup",
    "3",
    "--sweep-measure",
    "8",
    "--sweep-settle",
    "15",
    "--timeout",
    "2.5",
    "--refresh-delay",
    "0.5",
    "--max-attempts",
    "3",
    "--quiet",
    "--no-build",
]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> dict:
    results_dir = tmp_path_factory.mktemp("sweep")
    code = cli.main(
        ["story", "uwsgi-threads", "gunicorn-gevent", *SWEEP, "--results-dir", str(results_dir)]
    )
    (path,) = results_dir.glob("*-story/story.json")
    data = json.loads(path.read_text())
    assert code == 0, [m.get("error") for m in data["sweep"]["modes"]]
    assert (path.parent / "story-sweep.png").stat().st_size > 10_000
    return {m["mode"]: {s["rate"]: s for s in m["steps"]} for m in data["sweep"]["modes"]}


def test_a_full_thread_pool_answers_below_the_offered_load_where_gevent_does_not(sweep):
    """2 x 4 threads at 1 s serve at most 8/s: offered 16/s, goodput stays clearly below it
    (users reload, attempts rise above the offered rate); gevent follows the offered load."""
    threads, gevent = sweep["uwsgi-threads"], sweep["gunicorn-gevent"]
    for steps in (threads, gevent):
        assert all(s["adds_up"] == [] for s in steps.values())
        assert steps[4.0]["goodput_per_s"] >= 0.6 * steps[4.0]["offered_per_s"], steps[4.0]
    assert threads[16.0]["goodput_per_s"] < 0.75 * threads[16.0]["offered_per_s"], threads
    assert threads[16.0]["attempts_per_s"] > 1.2 * threads[16.0]["offered_per_s"], threads
    assert gevent[16.0]["goodput_per_s"] >= 0.8 * gevent[16.0]["offered_per_s"], gevent

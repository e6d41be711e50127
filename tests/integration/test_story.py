"""The war story on a short schedule, for real: a thread pool collapses where gevent holds.

A small pool (2 x 8 threads) and an incident that needs far more than it has (30 visits/s x
2 s = 60 in flight), so the shape is unmistakable on a busy 2-core machine: during the incident
the thread pool's goodput is clearly below gevent's, and gevent's stays near the arrivals.
About two minutes: two targets, 25 s of load each (an incident of 10 s), plus bringing them
up and down. In the same `playground story`, ab drives the same incident (a closed loop,
--closed-loop) on both targets (about a minute and a half more), and a sweep of two offered
rates runs on both (about a minute). Last, a story is stopped with SIGTERM half-way: nothing
is left behind and the target it finished is kept (under a minute). The remedies are in
test_story_remedies.py.

These run in a lane of their own beside the other tests (tests/lanes.py).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from playground.commands import kinds
from playground.core import runstore
from playground.incident import held
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.story import reread
from tests.integration.conftest import ROOT, leftovers, sh, wait_until
from tests.integration.storyruns import own_runner_lock, run_in, story_run

pytestmark = pytest.mark.integration

PLAYGROUND = str(Path(sys.executable).with_name("playground"))
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
    "10",
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


@pytest.fixture(scope="module", autouse=True)
def own_lock(tmp_path_factory) -> Iterator[None]:
    with own_runner_lock(tmp_path_factory):
        yield


# After the incident, on the same targets and settings: goodput against two offered rates, the
# third party at 1 s, where the 2 x 8 pool answers at most 16/s (a step: 3 s of warm-up, 8 s
# measured).
SWEEP = [
    "--sweep",
    "--sweep-rates",
    "6,32",
    "--sweep-delay",
    "1",
    "--sweep-warmup",
    "3",
    "--sweep-measure",
    "8",
    "--sweep-settle",
    "15",
]


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> tuple[Path, StoryRun]:
    """One `playground story` for the incident, its closed loop and the sweep."""
    results_dir = tmp_path_factory.mktemp("story")
    run = story_run(results_dir, "uwsgi-threads", "uwsgi-gevent", *SHORT, "--closed-loop", *SWEEP)
    assert run.finished_at is not None
    (run_dir,) = results_dir.glob(f"attempt-*/{run.run_id}")  # the run the generator kept
    assert (run_dir / "report.md").exists()
    return run_dir, run


@pytest.fixture(scope="module")
def story(measured) -> dict[str, StoryTarget]:
    return {t.name.removeprefix("story-"): t for t in measured[1].targets}


def test_every_attempt_is_accounted_for_exactly_once(story):
    for name, t in story.items():
        assert t.adds_up == [], name
        s, rows = t.summary, t.seconds
        assert sum(r.arrivals for r in rows) == s.visits
        assert sum(r.arrivals + r.refreshes for r in rows) == s.attempts
        assert sum(r.goodput + r.timeouts + r.errors for r in rows) == s.attempts


def test_the_thread_pool_collapses_where_gevent_holds(story):
    threads, gevent = story["uwsgi-threads"].summary, story["uwsgi-gevent"].summary
    # The report's own line for "held" (a share of the visits during the incident served).
    assert gevent.visits_served_during >= held.HELD_SHARE, gevent
    assert threads.visits_served_during < held.HELD_SHARE, threads
    assert threads.goodput_during < 0.6 * gevent.goodput_during, (threads, gevent)
    # Users who gave up came back: more attempts per visit than where nobody had to.
    assert threads.amplification > gevent.amplification + 0.2
    # ... and the verdicts, decided when measured, say what the figures say.
    assert held.was_held(story["uwsgi-threads"]) is False
    assert held.was_held(story["uwsgi-gevent"]) is True


def test_the_servers_were_watched(story):
    for name, t in story.items():
        sampled = [r for r in t.seconds if r.nginx_active is not None]
        assert len(sampled) > 20, name
        assert any(r.busy_cores for r in t.seconds), name
    # The pool was full: all 16 threads busy at once, and the gevent target had more than that.
    assert story["uwsgi-threads"].summary.peak_busy_cores == 16
    assert story["uwsgi-gevent"].summary.peak_busy_cores > 16


def test_each_measurement_keeps_its_candidates_and_its_raw_files_give_them_again(measured):
    """What might decide a collapse (incident/mechanism.py), from the app's own log of each
    request joined with nginx's and slow_api's: present, plausible, the same when read again
    from the run's raw files (story/reread.py), and the pool's requests waited for a thread
    at the incident's onset where gevent's did not."""
    run_dir, run = measured
    for t in run.targets:
        m = t.mechanism
        assert m is not None, t.name
        assert m.busiest_share_begun_onset is not None
        assert 0.5 <= m.busiest_share_begun_onset <= 1, t.name  # two processes: at least half
        assert m.hold_beyond_onset_ms is not None and 0 <= m.hold_beyond_onset_ms < 500
        assert m.arrivals_onset and m.arrivals_onset > 0
        # The schedule's 5 s before the incident are all warm-up (mechanism.BEFORE_FROM_S):
        # nothing is read "before", rather than a figure from the pool warming up.
        assert m.busiest_share_begun_before is None and m.hold_beyond_before_ms is None
        assert reread.mechanism_of(run, t, run_dir / "raw") == m
    threads, gevent = (run.target(f"story-uwsgi-{m}") for m in ("threads", "gevent"))
    assert threads and threads.mechanism and gevent and gevent.mechanism
    waits = threads.mechanism.thread_wait_p90_onset_s, gevent.mechanism.thread_wait_p90_onset_s
    assert waits[0] is not None and waits[1] is not None
    # 2 x 8 threads for 60 requests in flight: the pool's requests queue; gevent's 2 x 200 do not
    assert waits[0] > waits[1] + 0.1, waits


def test_the_third_party_worked_for_users_who_had_gone_where_the_pool_collapsed(story):
    """Counted at the third party (its calls joined with nginx's log on the request's id):
    the thread pool made calls whose answer came after nginx had ended the request, the users
    it had lost; gevent answered its users in time, so (nearly) none of its calls were."""
    threads, gevent = story["uwsgi-threads"].summary, story["uwsgi-gevent"].summary
    for s in (threads, gevent):
        assert s.upstream_calls is not None and s.upstream_calls >= 0.5 * s.visits, s
    assert threads.calls_for_nobody > 20, threads
    assert gevent.calls_for_nobody <= 0.02 * gevent.upstream_calls + 2, gevent


def test_ab_through_the_same_incident_slows_down_instead_of_failing(story):
    """The closed loop hides the collapse: ab sends fewer requests while the third party is
    slow and almost none fail, where the open loop's users time out by the dozen."""
    for name, t in story.items():
        ab = t.closed_loop
        assert ab is not None and ab.adds_up == [], name
        per = {p.name: p for p in ab.phases}
        assert sum(p.requests for p in ab.phases) == ab.requests == ab.complete
        # 0.2 s -> 2 s: a closed loop of c connections sends far fewer requests meanwhile.
        assert per["during"].per_s < 0.5 * per["before"].per_s, (name, per)
        assert ab.failed + ab.non_2xx <= 0.02 * ab.requests + 2, (name, ab)
    assert story["uwsgi-threads"].summary.timeouts > 20


@pytest.fixture(scope="module")
def sweep(measured) -> dict:
    run_dir, run = measured
    assert run.sweep is not None
    assert all(t.error is None for t in run.sweep.targets), run.sweep.targets
    assert (run_dir / "story-sweep.png").stat().st_size > 10_000
    return {t.name.removeprefix("story-"): {s.rate: s for s in t.steps} for t in run.sweep.targets}


def test_a_full_thread_pool_answers_below_the_offered_load_where_gevent_does_not(sweep):
    """2 x 8 threads at 1 s serve at most 16/s: offered 32/s, goodput stays clearly below it
    (users reload, attempts rise above the offered rate); gevent follows the offered load."""
    threads, gevent = sweep["uwsgi-threads"], sweep["uwsgi-gevent"]
    for steps in (threads, gevent):
        assert all(s.adds_up == [] for s in steps.values())
        assert steps[6.0].goodput_per_s >= 0.6 * steps[6.0].offered_per_s, steps[6.0]
    assert threads[32.0].goodput_per_s < 0.75 * threads[32.0].offered_per_s, threads
    assert threads[32.0].attempts_per_s > 1.2 * threads[32.0].offered_per_s, threads
    assert gevent[32.0].goodput_per_s >= 0.8 * gevent[32.0].offered_per_s, gevent


# --- stopped half-way ----------------------------------------------------------------------
TINY = [
    "--rate",
    "10",
    "--normal-delay",
    "0.2",
    "--incident-delay",
    "0.5",
    "--before",
    "2",
    "--incident",
    "3",
    "--after",
    "3",
    "--threads",
    "8",
    "--async-cores",
    "100",
    "--quiet",
    "--no-build",
]
PROJECTS = ("story-uwsgi-threads", "story-uwsgi-gevent")


def _targets_done(results_dir: Path) -> int:
    found = list(results_dir.glob("*-story/results.json"))
    if not found:
        return 0
    try:
        return len(kinds.load_run(found[0]).targets)  # type: ignore[union-attr]
    except runstore.ResultsError:
        return 0  # caught between two writes: the file is replaced atomically, so retry


def _answered(project: str) -> int:
    """Requests nginx has logged in `project`'s ingress (0 before it has any)."""
    proc = sh("docker", "exec", f"{project}-ingress-1", "wc", "-l", "/tmp/access.log", check=False)
    words = proc.stdout.split()
    return int(words[0]) if proc.returncode == 0 and words else 0


def test_sigterm_half_way_leaves_nothing_and_keeps_the_finished_target(tmp_path):
    # The story's own lock (own_lock) comes with the environment the command inherits.
    proc = subprocess.Popen(
        [
            PLAYGROUND,
            "story",
            "uwsgi-threads",
            "uwsgi-gevent",
            *TINY,
            "--results-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: _targets_done(tmp_path) == 1, timeout=240, what="the first target")
        # The second target's load generator is running: stop the story in the middle of it.
        wait_until(
            lambda: (
                "story-uwsgi-gevent-load"
                in sh("docker", "ps", "--format", "{{.Names}}").stdout.split()
            ),
            timeout=120,
            what="the second target's load",
        )
        # ... and its users are being served: answers in nginx's access log beyond those there
        # when the load started (a second of visits at 10/s).
        seen = _answered(PROJECTS[1])
        wait_until(
            lambda: _answered(PROJECTS[1]) >= seen + 10,
            timeout=60,
            what="the second target's first answers",
        )
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    for project in PROJECTS:
        assert not any(leftovers(project).values()), project
    # This story's containers only (its projects' and its load generators'): another story's
    # run beside this one (a subset, another lane) is no concern of this test.
    assert not [
        n
        for n in sh("docker", "ps", "-a", "--format", "{{.Names}}").stdout.split()
        if n.startswith(PROJECTS)
    ]
    run = run_in(tmp_path)
    assert run.finished_at is None
    (kept,) = run.targets
    assert kept.name == "story-uwsgi-threads" and kept.summary is not None
    assert kept.summary.visits > 0 and kept.adds_up == []
    assert (tmp_path / run.run_id / "report.md").exists()

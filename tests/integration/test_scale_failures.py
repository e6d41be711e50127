"""The scale profile at the largest concurrency a CI run affords (c=2000, the ideal rate at half
a core; measured in the one scale run test_scale.py reads too, conftest.scale_sweep): nothing
fails and nothing answers non-2xx in the gevent modes and behind nginx. And a failure provoked
on purpose (an open-file limit far too low) is named by the runner, not left as a bare count.
And the thread pool's scale override keeps the connection ab opens and never writes on open
past a run's tail, so it does not come back as a failed request.

The full c=10,000 figures, and what each failure there was, are in scale/README.md.
"""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

from playground.bench.plan import Plan
from playground.bench.runner import Runner
from playground.core.compose import Docker
from playground.core.results import Run
from playground.core.runstore import RunStore
from playground.core.scenarios import REGISTRY
from tests.integration.conftest import ROOT, SCALE_AT_C, SCALE_C, leftovers, project_of, sh

pytestmark = pytest.mark.integration

C = SCALE_C
MODES = ("uwsgi-gevent", *SCALE_AT_C)


@pytest.fixture(scope="module")
def sweep(scale_sweep) -> dict:
    return scale_sweep


@pytest.mark.parametrize("name", MODES)
def test_nothing_fails_at_the_largest_ci_concurrency(sweep, name):
    at = {e["concurrency"]: e for e in sweep["scenarios"] if e["name"] == name}
    # NAME@2000 ran that mode at c=2000 only (uWSGI gevent's curve is test_scale's).
    assert name == "uwsgi-gevent" or sorted(at) == [C], sorted(at)
    entry = at[C]
    assert entry["error"] is None, entry.get("error")
    assert entry["failed"] == 0, (entry["failures"], entry["notes"])
    assert entry["non_2xx"] == 0, entry["notes"]
    assert entry["valid"], entry["invalid_reasons"]
    # Every request was in flight at once: the mode held the whole concurrency.
    assert entry["efficiency"] >= 0.7, entry["efficiency"]


def test_the_thread_pools_scale_override_keeps_a_silent_connection_past_a_runs_tail():
    """Where a pool answers unevenly (c above its threads) ab opens one connection more than it
    writes on: 2,002 for `-n 2001 -c 500` (scale/README.md). Gunicorn's gthread worker closes
    a connection that sent nothing 7 s after a thread picks it up (5 s waiting in the thread,
    then `keepalive`, 2 s), and ab counts that close as a failed request when answers are
    still to come. The scale override's keepalive (60 s) keeps it open past the run's tail."""
    files = ("-f", "sync-gunicorn.yml", "-f", "scale/sync-gunicorn.yml")
    project = project_of("sync-gunicorn.yml")
    sh("docker", "compose", *files, "up", "-d", "--wait", "--wait-timeout", "180", timeout=400)
    try:
        with socket.create_connection(("127.0.0.1", 3000), timeout=10) as silent:
            silent.settimeout(15)
            try:
                closed_with = silent.recv(1)
            except TimeoutError:
                closed_with = None
        assert closed_with is None, (
            f"the server closed a silent connection within 15 s: {closed_with!r}"
        )
    finally:
        sh("docker", "compose", *files, "down", "--volumes", "--remove-orphans", "--timeout", "10")
    left = leftovers(project)
    assert not any(left.values()), left


def test_the_runner_names_an_open_file_limit_it_runs_into(tmp_path):
    """256 open files for uWSGI gevent at c=600: each of its two workers holds ~300 requests,
    two sockets each. The failures must come with the limit that caused them."""
    target = replace(REGISTRY["uwsgi-gevent"], overrides=("tests/data/scale-low-open-files.yml",))
    c = 600
    store = RunStore.create_run(results_dir=tmp_path, run=Run(run_id="low-open-files"))
    plan = Plan(
        targets=(target,),
        sweep=(c,),
        delays=((c, 3.0),),
        calibration=False,
        overrides_dir=ROOT / "scale",
    )
    Runner(docker=Docker(root=ROOT), store=store, plan=plan).run(None)
    (entry,) = store.run.scenarios
    assert entry.error is None, entry.error
    assert (entry.failed or 0) + (entry.non_2xx or 0) > 0, "the low limit provoked nothing"
    assert not entry.valid
    named = [n for n in entry.notes if "open-file limit of 256" in n]
    assert named, entry.notes
    assert "descriptors running out" in named[0]
    assert not any(leftovers("async-gevent-uwsgi").values())

"""The scale profile at the largest concurrency a CI run affords (c=2000, the ideal rate at half
a core; measured in the one scale run test_scale.py reads too, conftest.scale_sweep): nothing
fails and nothing answers non-2xx in the gevent modes and behind nginx. And a failure provoked
on purpose (an open-file limit far too low) is named by the runner, not left as a bare count.

The full c=10,000 figures, and what each failure there was, are in scale/README.md.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from playground.bench.plan import Plan
from playground.bench.runner import Runner
from playground.core.compose import Docker
from playground.core.results import Run
from playground.core.runstore import RunStore
from playground.core.scenarios import REGISTRY
from tests.integration.conftest import ROOT, SCALE_AT_C, SCALE_C, leftovers

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

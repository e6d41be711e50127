"""results.json: schema, atomic writes, resume after an interruption, one runner at a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core import runstore
from playground.core.results import Entry, Run
from playground.core.runstore import ResultsError, RunStore

DATA = Path(__file__).resolve().parents[1] / "data"


def entry(name: str, c: int = 200, *, kind: str = "scenario", **figures) -> Entry:
    extra = {k: figures.pop(k) for k in list(figures) if k not in Entry.__dataclass_fields__}
    return Entry(name=name, concurrency=c, kind=kind, extra=extra, **figures)


def make_store(tmp_path: Path, run_id: str = "20260101-000000") -> RunStore[Run]:
    return RunStore.create_run(results_dir=tmp_path, run=Run(run_id=run_id))


def add(store: RunStore[Run], entry: Entry) -> None:
    """What the bench's runner does with each finished measurement."""
    store.run.record(entry)
    store.save()


def test_create_writes_a_valid_file_and_points_latest(tmp_path):
    store = make_store(tmp_path)
    data = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert data["schema_version"] == runstore.SCHEMA_VERSION
    assert data["scenarios"] == [] and data["finished_at"] is None
    assert runstore.load(tmp_path / "latest") == store.run
    assert (tmp_path / "latest").resolve() == store.run_dir.resolve()
    newer = make_store(tmp_path, "20260101-000001")
    assert (tmp_path / "latest").resolve() == newer.run_dir.resolve()


def test_every_add_is_on_disk_at_once(tmp_path):
    store = make_store(tmp_path)
    add(store, entry("a"))
    add(store, entry("b", c=50))
    add(store, entry("calibration", kind="calibration"))
    on_disk = runstore.load(store.run_dir)
    assert [e.name for e in on_disk.scenarios] == ["a", "b"]
    assert on_disk.calibration is not None and on_disk.calibration.name == "calibration"


def test_a_failed_write_keeps_the_previous_file_whole(tmp_path):
    store = make_store(tmp_path)
    add(store, entry("a"))
    before = store.path.read_text()
    with pytest.raises(TypeError):
        add(store, entry("b", unserialisable=object()))
    assert store.path.read_text() == before
    assert [p.name for p in store.run_dir.iterdir()] == ["results.json"]


def test_resume_skips_what_was_finished_and_retries_errors(tmp_path):
    store = make_store(tmp_path)
    add(store, entry("a"))
    add(store, entry("b", error="never became healthy"))
    add(store, entry("calibration", kind="calibration", error="no answer"))
    # ... the run is interrupted here; a new process resumes it:
    resumed = RunStore.resume(results_dir=tmp_path, ref="latest")
    assert resumed.run.done() == {("a", 200)}
    add(resumed, entry("b", error=None))
    add(resumed, entry("calibration", kind="calibration"))
    assert resumed.run.done() == {("a", 200), ("b", 200), ("calibration", 200)}
    assert [e.name for e in runstore.load(store.run_dir).scenarios] == ["a", "b"]


def test_finish_stamps_the_time_and_a_resumed_run_is_unfinished_again(tmp_path):
    store = make_store(tmp_path)
    store.finish()
    assert runstore.load(store.run_dir).finished_at == store.run.finished_at is not None
    resumed = RunStore.resume(results_dir=tmp_path, ref=store.run.run_id)
    assert resumed.run.finished_at is None


def test_a_scale_runs_probe_moves_out_of_the_sweep(tmp_path):
    store = make_store(tmp_path)
    add(store, entry("probe-x", c=200, kind="probe"))
    add(store, entry("a"))
    moved = store.run.set_probe("probe-x")
    store.save()
    on_disk = runstore.load(store.run_dir)
    assert on_disk.probe is not None and on_disk.probe.key == moved.key == ("probe-x", 200)
    assert [e.name for e in on_disk.scenarios] == ["a"]
    assert ("probe-x", 200) not in on_disk.done()


def test_existing_run_is_never_overwritten(tmp_path):
    make_store(tmp_path)
    with pytest.raises(ResultsError, match="--resume"):
        make_store(tmp_path)


def test_unusable_files_give_clear_errors(tmp_path):
    with pytest.raises(ResultsError, match="no results"):
        runstore.load(tmp_path)
    (tmp_path / "results.json").write_text("{half")
    with pytest.raises(ResultsError, match="not valid JSON"):
        runstore.load(tmp_path)
    (tmp_path / "results.json").write_text('{"something": "else"}')
    with pytest.raises(ResultsError, match="not a playground results file"):
        runstore.load(tmp_path)
    with pytest.raises(ResultsError, match="no run"):
        runstore.resolve_run(tmp_path, "nope")


def test_a_file_of_the_wrong_shape_names_the_entry_and_the_key(tmp_path):
    data = json.loads((DATA / "results_recorded.json").read_text())
    data["scenarios"][0]["steady_rps"] = "fast"
    (tmp_path / "results.json").write_text(json.dumps(data))
    name = data["scenarios"][0]["name"]
    with pytest.raises(ResultsError, match=rf"'{name}': 'steady_rps' should be a number"):
        runstore.load(tmp_path)


def test_an_older_schema_is_refused_clearly(tmp_path):
    (tmp_path / "results.json").write_text('{"schema_version": 0, "scenarios": []}')
    with pytest.raises(ResultsError, match="not a playground results file"):
        runstore.load(tmp_path)


HOLDER = """
import sys, time
from pathlib import Path
from playground.core import runstore
with runstore.exclusive(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(30)
"""


@pytest.fixture()
def runner_lock(tmp_path, monkeypatch) -> Path:
    """A private machine-wide lock, so these tests never meet a real run on this machine."""
    path = tmp_path / "runner.lock"
    monkeypatch.setenv("PLAYGROUND_LOCK", str(path))
    return path


@pytest.mark.parametrize("same_results_dir", [True, False])
def test_a_second_runner_refuses_clearly(tmp_path, runner_lock, same_results_dir):
    first, second = tmp_path / "a", tmp_path / ("a" if same_results_dir else "b")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(first)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        # Even with another --results-dir: the ports and containers are the machine's.
        with pytest.raises(
            ResultsError, match=rf"another playground run is in progress \(pid {holder.pid}\)"
        ):
            with runstore.exclusive(second):
                pass
    finally:
        holder.kill()
        holder.wait(10)
    with runstore.exclusive(second):  # free again once the first one is gone
        pass

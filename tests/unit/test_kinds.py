"""The registry of kinds (playground.commands.kinds): every list of kinds reads it, so a kind
registered here alone is loaded, redrawn by `playground report`, listed by `playground runs`,
recorded and shown by `playground record`, documented on the schema page, given its command
and placed by the layer test; a run is read by the word its file names, and a file written
before every file named its kind by the one rule in `results.with_kind`; and a fault run is
redrawn like the others."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from playground import cli
from playground.commands import kinds, schema
from playground.core import jsonmodel
from playground.core.jsonmodel import doc
from playground.core.records import RecordHeader
from playground.core.results import RunHeader, with_kind
from playground.core.runstore import write_json_atomic
from playground.faults.results import FaultFailed, FaultsRun
from playground.incident.storyresults import StoryRun
from tests.unit import test_layers


@dataclass
class ToyRun(RunHeader):
    """A toy kind's run: its header and one count."""

    FILE: ClassVar[str] = "toy.json"

    settings: int | None = doc("none")
    kind: str = doc("`toy`", "toy")
    count: int = doc("how many toys", 0)


@dataclass(frozen=True)
class ToyRecord(RecordHeader):
    """A toy run's record: its count in its header's settings."""

    READS: ClassVar[tuple[str, ...]] = ("toy",)


def _toy_record(run: ToyRun, *, machine: str) -> ToyRecord:
    return ToyRecord(run_id=run.run_id, kind="toy", machine=machine, settings={"count": run.count})


def _toy_report(run_dir: Path, run: Any) -> list[Path]:
    path = run_dir / "toy.md"
    path.write_text(f"# {run.count} toys\n")
    return [path]


def add_parser(sub: Any) -> None:
    """The toy kind's command (this module is its command module in the registry)."""
    toy = sub.add_parser("toy", help="make toys")
    toy.set_defaults(handler=lambda args, out, err: 0)


TOY = kinds.Kind(
    name="toy",
    package="toy",
    run_class=ToyRun,
    results_file=ToyRun.FILE,
    read=lambda data: jsonmodel.from_json(ToyRun, data, "toy.json"),
    write_report=_toy_report,
    count=lambda run: run.count,
    state=lambda run: "ok",
    record=_toy_record,
    record_class=ToyRecord,
    record_schema=((ToyRecord, "ToyRecord (a toy run's record)"),),
    commands=("tests.unit.test_kinds",),
    schema_intro=("# A toy run",),
    schema=((ToyRun, "ToyRun (the whole of `toy.json`)"),),
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, TOY))


def _keep(results_dir: Path, run: RunHeader) -> Path:
    run_dir = results_dir / run.run_id
    write_json_atomic(run_dir / run.FILE, run.to_json())
    return run_dir


def test_a_kind_registered_in_one_line_is_loaded_redrawn_listed_documented_and_placed(
    toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _keep(tmp_path, ToyRun(run_id="20261126-000000-toy", count=3, finished_at="x"))
    loaded = kinds.load_run(run_dir)
    assert isinstance(loaded, ToyRun) and loaded.count == 3
    assert cli.main(["report", "--results-dir", str(tmp_path), run_dir.name]) == 0
    assert (run_dir / "toy.md").read_text() == "# 3 toys\n"
    assert cli.main(["runs", "--results-dir", str(tmp_path)]) == 0
    assert "20261126-000000-toy" in capsys.readouterr().out
    assert "## ToyRun (the whole of `toy.json`)" in schema.schema_markdown()
    assert "## ToyRecord (a toy run's record)" in schema.schema_markdown()
    out = tmp_path / "runs"
    assert cli.main(["record", str(run_dir), "--out", str(out), "--machine", "a toy box"]) == 0
    assert cli.main(["record", "--show", run_dir.name, "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "run 20261126-000000-toy (toy, transcribed)" in shown and "count 3" in shown
    assert "toy" in cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert test_layers.layer("playground.toy.run") == "toy"
    assert not test_layers.allowed("playground.toy.run", "playground.bench.runner")


def test_without_its_line_the_kind_is_unknown(tmp_path: Path) -> None:
    run_dir = _keep(tmp_path, ToyRun(run_id="20261126-000000-toy"))
    with pytest.raises(jsonmodel.ResultsError):
        kinds.load_run(run_dir)
    assert test_layers.layer("playground.toy.run") == "nowhere"
    assert "ToyRun" not in schema.schema_markdown()


def test_a_fault_run_is_redrawn_by_report(tmp_path: Path) -> None:
    failed = FaultFailed(fault="upstream-outage", compose_file="sync-gunicorn.yml", error="no")
    run = FaultsRun(run_id="20261126-000000-faults", runs=[failed])
    run_dir = _keep(tmp_path, run)
    assert json.loads((run_dir / "faults.json").read_text())["runs"][0]["error"] == "no"
    assert isinstance(kinds.load_run(run_dir), FaultsRun)
    assert cli.main(["report", "--results-dir", str(tmp_path), run_dir.name]) == 0
    assert "sync-gunicorn.yml" in (run_dir / "faults.md").read_text()


DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize(
    ("changes", "word"),
    [
        ({"kind": "story", "predicted": True}, "predict"),
        ({"kind": "story", "run_id": "20261127-013346-swarm"}, "swarm"),
        ({"kind": "story"}, "story"),
        ({"kind": None, "runs": []}, "faults"),
        ({"kind": None, "settings": {"tool": "ab", "scale": None}}, "scale"),
        ({"kind": None}, "bench"),
        ({"kind": "predict"}, "predict"),
    ],
)
def test_a_file_written_before_files_named_their_kind_is_given_its_word(
    changes: dict[str, Any], word: str
) -> None:
    data = {"schema_version": 1, "run_id": "20261125-020108-story", "settings": {}} | changes
    data = {k: v for k, v in data.items() if v is not None}
    named = with_kind(data)
    assert named["kind"] == word and "predicted" not in named


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("results_recorded.json", "bench"),
        ("results_sweep.json", "bench"),
        ("story_results_recorded.json", "story"),
    ],
)
def test_the_recorded_runs_load_as_their_kind(name: str, word: str) -> None:
    kind, run = kinds.load(DATA / name)
    assert kind.name == run.kind == word


def test_an_old_prediction_and_an_old_run_on_a_stack_load_as_their_own_kinds(
    tmp_path: Path,
) -> None:
    """Written before files named their kind: a prediction said `story` with `predicted`, a run
    on a stack `story` with an id ending in `-swarm`."""
    for run_id, extra, word in (
        ("20261126-000000-predict", {"predicted": True}, "predict"),
        ("20261126-000000-swarm", {}, "swarm"),
    ):
        data = StoryRun(run_id=run_id).to_json() | {"kind": "story"} | extra
        write_json_atomic(tmp_path / run_id / "results.json", data)
        kind, run = kinds.load(tmp_path / run_id)
        assert kind.name == run.kind == word
    assert kinds.load_run(tmp_path / "20261126-000000-predict").predicted


def test_a_record_written_before_records_named_a_stack_reads_as_swarm(tmp_path: Path) -> None:
    path = tmp_path / "20261126-000000-swarm.json"
    path.write_text(json.dumps({"run_id": path.stem, "kind": "story", "targets": []}))
    assert kinds.load_record(path).kind == "swarm"


def test_each_kind_has_its_own_word_and_the_order_of_the_registry_does_not_matter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = [k.name for k in kinds.KINDS]
    assert len(set(words)) == len(words)
    assert all(k.name in k.record_class.READS for k in kinds.KINDS)
    files = [DATA / "results_recorded.json", DATA / "story_results_recorded.json"]
    found = [kinds.load(path)[0].name for path in files]
    monkeypatch.setattr(kinds, "KINDS", tuple(reversed(kinds.KINDS)))
    assert [kinds.load(path)[0].name for path in files] == found == ["bench", "story"]

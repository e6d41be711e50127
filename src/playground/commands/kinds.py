"""The registry of kinds of run: one line per kind, and every list of kinds reads it.

Each kind names its package under `src/playground/`, the class its results file holds, that
file's name, how a run of it is told apart in the file, how the file is read, how its report is
written, and the commands that make it. Loading a run (`load_run`, `runs`), `playground report`,
`playground runs`, the schema page (`commands/schema.py`), the CLI (`cli.py`) and the layer test
(`tests/unit/test_layers.py`) all go through `KINDS`: a new kind of run is one package and one
line here (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from playground import report
from playground.bench import record as bench_record
from playground.core import records, runstore
from playground.core.jsonmodel import ResultsError
from playground.core.records import RecordError, RecordHeader
from playground.core.results import SCHEMA_CLASSES as RUN_SCHEMA_CLASSES
from playground.core.results import Run, RunHeader
from playground.core.verdicts import upgrade
from playground.faults import render as faults_render
from playground.faults import runrecord as faults_record
from playground.faults.results import SCHEMA_CLASSES as FAULT_SCHEMA_CLASSES
from playground.faults.results import SCHEMA_INTRO as FAULT_SCHEMA_INTRO
from playground.faults.results import FaultsRun
from playground.incident import predictrecord as predict_record
from playground.incident import runrecords as story_record
from playground.incident.storyresults import SCHEMA_CLASSES as STORY_SCHEMA_CLASSES
from playground.incident.storyresults import SCHEMA_INTRO as STORY_SCHEMA_INTRO
from playground.incident.storyresults import StoryRun
from playground.story import findings as story_findings
from playground.story import report as story_report

#: A schema page's tables: each class with its heading.
SchemaTables = tuple[tuple[type, str], ...]


@dataclass(frozen=True)
class Kind:
    """One kind of run, as every list of kinds needs it."""

    #: The kind's package under src/playground (`bench`: src/playground/bench/).
    package: str
    #: What `playground runs` calls a run of it.
    label: str
    #: The class its results file holds.
    run_class: type[RunHeader]
    #: The file it is kept in, inside its run folder.
    results_file: str
    #: Whether a results file's JSON is a run of this kind (after its file name matched).
    claims: Callable[[dict[str, Any]], bool]
    #: The file's JSON as the typed run.
    read: Callable[[dict[str, Any]], RunHeader]
    #: Writes the run's report into its folder; the files it wrote.
    write_report: Callable[[Path, Any], list[Path]]
    #: One line of `playground runs`: how many targets, and whether the run can be trusted.
    count: Callable[[Any], int]
    state: Callable[[Any], str]
    #: A stored run as its compact record (docs/runs/<run id>.json), the machine given in words;
    #: the record's class (its `KINDS` are the record's `kind` values) and its schema tables.
    record: Callable[..., RecordHeader]
    record_class: type[RecordHeader]
    record_schema: SchemaTables
    #: The modules of the commands that make a run of it: each adds its parser to the CLI with
    #: its `add_parser` (imported when the CLI is built, so redrawing a report imports no runner).
    commands: tuple[str, ...] = ()
    #: Its part of the schema page: lines before its tables, then the tables.
    schema_intro: tuple[str, ...] = ()
    schema: SchemaTables = field(default=())


def _read_bench(data: dict[str, Any]) -> Run:
    if not isinstance(data.get("scenarios"), list):
        raise ResultsError(f"kind {data.get('kind')!r} is not one this version knows")
    return upgrade(Run.from_json(data))


def _bench_state(run: Run) -> str:
    invalid = [e.name for e in run.entries() if not e.valid]
    return f"invalid: {', '.join(invalid)}" if invalid else "ok"


def _story_state(run: StoryRun) -> str:
    bad = story_findings.failed(run)
    return f"not trusted: {', '.join(bad)}" if bad else "ok"


def _story_report(run_dir: Path, run: StoryRun) -> list[Path]:
    """A story run's report from its stored figures; the model runs (and is imported) only for
    a run measured before they were stored, to set its figures beside the measured ones."""
    if run.missing_prediction():
        from playground.predict import beside

        beside.attach(run)
    return story_report.write_report(run_dir=run_dir, run=run)


def _is_story(data: dict[str, Any], *, predicted: bool) -> bool:
    return data.get("kind") == StoryRun.KIND and bool(data.get("predicted")) == predicted


def _is_swarm(data: dict[str, Any]) -> bool:
    """A story run measured on a Swarm stack (`playground swarm`): named so by its id."""
    return _is_story(data, predicted=False) and str(data.get("run_id", "")).endswith("-swarm")


KINDS: tuple[Kind, ...] = (
    Kind(
        package="bench",
        label="bench",
        record=bench_record.from_run,
        record_class=bench_record.BenchRecord,
        record_schema=bench_record.SCHEMA_CLASSES,
        run_class=Run,
        results_file=Run.FILE,
        claims=lambda data: data.get("kind", "bench") == "bench",
        read=_read_bench,
        write_report=lambda run_dir, r: report.write_report(run_dir=run_dir, results=r),
        count=lambda r: len(r.entries()),
        state=_bench_state,
        commands=("playground.commands.bench", "playground.commands.scale"),
        schema=RUN_SCHEMA_CLASSES,
    ),
    Kind(
        package="story",
        label="story",
        record=story_record.from_run,
        record_class=story_record.RunRecord,
        record_schema=story_record.SCHEMA_CLASSES,
        run_class=StoryRun,
        results_file=StoryRun.FILE,
        claims=lambda data: _is_story(data, predicted=False) and not _is_swarm(data),
        read=StoryRun.from_json,
        write_report=_story_report,
        count=lambda r: len(r.targets),
        state=_story_state,
        commands=("playground.commands.story",),
        schema_intro=STORY_SCHEMA_INTRO,
        schema=STORY_SCHEMA_CLASSES,
    ),
    Kind(
        package="predict",
        label="prediction",
        record=predict_record.from_run,
        record_class=predict_record.PredictRecord,
        record_schema=predict_record.SCHEMA_CLASSES,
        run_class=StoryRun,
        results_file=StoryRun.FILE,
        claims=lambda data: _is_story(data, predicted=True),
        read=StoryRun.from_json,
        write_report=_story_report,
        count=lambda r: len(r.targets),
        state=_story_state,
        commands=("playground.commands.predict",),
    ),
    Kind(
        package="faults",
        label="faults",
        record=faults_record.from_run,
        record_class=faults_record.FaultsRecord,
        record_schema=faults_record.SCHEMA_CLASSES,
        run_class=FaultsRun,
        results_file=FaultsRun.FILE,
        claims=lambda data: True,
        read=FaultsRun.from_json,
        write_report=lambda run_dir, r: [faults_render.write_report(run_dir=run_dir, run=r)],
        count=lambda r: len(r.runs),
        state=lambda r: f"problems: {len(r.problems())}" if r.problems() else "ok",
        commands=("playground.commands.faults",),
        schema_intro=FAULT_SCHEMA_INTRO,
        schema=FAULT_SCHEMA_CLASSES,
    ),
    # A run on a stack is a story run, told apart by its id.
    Kind(
        package="swarm",
        label="story on Swarm",
        # Its record is a story run's, each target with the stack it ran on.
        record=story_record.from_run,
        record_class=story_record.RunRecord,
        record_schema=(),
        run_class=StoryRun,
        results_file=StoryRun.FILE,
        claims=_is_swarm,
        read=StoryRun.from_json,
        write_report=lambda run_dir, r: story_report.write_report(run_dir=run_dir, run=r),
        count=lambda r: len(r.targets),
        state=_story_state,
        commands=("playground.commands.swarm",),
    ),
)


def results_files() -> tuple[str, ...]:
    """Every kind's results file, each once, in the registry's order."""
    return tuple(dict.fromkeys(k.results_file for k in KINDS))


def _file(path: Path) -> Path:
    if not path.is_dir():
        return path
    found = [path / name for name in results_files() if (path / name).exists()]
    return found[0] if found else path / results_files()[0]


def load(path: Path) -> tuple[Kind, RunHeader]:
    """A run's results file (a run folder is accepted too) as its kind and typed run."""
    path = _file(path)
    data = runstore.read(path)
    for kind in KINDS:
        named = path.name in results_files()  # a file of another name: any kind's
        if (not named or path.name == kind.results_file) and kind.claims(data):
            try:
                return kind, kind.read(data)
            except ResultsError as exc:
                raise ResultsError(f"{path}: {exc}") from None
    raise ResultsError(f"{path}: kind {data.get('kind')!r} is not one this version knows")


def load_run(path: Path) -> Any:
    """Any run's results file as its typed run, by its kind."""
    return load(path)[1]


def resolve_run(results_dir: Path, ref: str) -> Path:
    """A run by id, by 'latest', or by path, of any kind."""
    return runstore.resolve_run(results_dir, ref, files=results_files())


def runs(results_dir: Path) -> list[tuple[Path, tuple[Kind, RunHeader] | ResultsError]]:
    """Every run folder under `results_dir`, oldest first, with its kind and run (or why it
    cannot be read)."""
    found: list[tuple[Path, tuple[Kind, RunHeader] | ResultsError]] = []
    for path in sorted(p for name in results_files() for p in results_dir.glob(f"*/{name}")):
        if path.parent.is_symlink():
            continue  # results/latest
        try:
            found.append((path.parent, load(path)))
        except ResultsError as exc:
            found.append((path.parent, exc))
    return found


def load_record(path: Path) -> RecordHeader:
    """A run record (docs/runs/<run id>.json) of any kind, read by its `kind`."""
    data = records.read(path)
    for kind in KINDS:
        if data.get("kind") in kind.record_class.KINDS:
            return records.load_as(kind.record_class, path, data)
    raise RecordError(f"{path.name}: kind {data.get('kind')!r} is not one this version records")


def record_path(ref: str, directory: Path) -> Path:
    """A record by its file's path, or by its run id in `directory`."""
    path = Path(ref)
    if path.is_file():
        return path
    path = directory / f"{ref}.json"
    if not path.is_file():
        raise RecordError(f"no record of run {ref!r} in {directory}")
    return path


def packages() -> tuple[str, ...]:
    """Every kind's package, each once, in the registry's order."""
    return tuple(dict.fromkeys(k.package for k in KINDS))


def add_parsers() -> list[Callable[[Any], None]]:
    """Each kind's commands' `add_parser`, in the registry's order."""
    names = [name for kind in KINDS for name in kind.commands]
    return [import_module(name).add_parser for name in names]


def schema_parts() -> Sequence[tuple[tuple[str, ...], SchemaTables]]:
    """Each kind's part of the schema page: its introduction and its tables."""
    return [(k.schema_intro, k.schema) for k in KINDS if k.schema]

"""The registry of kinds of run: one line per kind, and every list of kinds reads it.

Each kind has one word (`bench`, `scale`, `faults`, `story`, `predict`, `swarm`): its line here,
the `kind` its results file and its record name, and its package under `src/playground/`. A
file is read by that word alone (a file written before every file named its kind is given its
word by `core.results.with_kind`, as it is read). Each line names too the class its results
file holds, that file's name, how the file is read, how its report is written, and the commands
that make it. Loading a run (`load_run`, `runs`), `playground report`,
`playground runs`, the schema page (`commands/schema.py`), the CLI (`cli.py`) and the layer test
(`tests/unit/test_layers.py`) all go through `KINDS`: a new kind of run is one package and one
line here (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from importlib import import_module
from pathlib import Path
from typing import Any

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

    #: The kind's word: the `kind` its results file and its record name, and what `playground
    #: runs` calls it.
    name: str
    #: Its package under src/playground, named by its word (`bench`: src/playground/bench/);
    #: a scale run's is the bench's: the same runner and results, swept over the cores.
    package: str
    #: The class its results file holds.
    run_class: type[RunHeader]
    #: The file it is kept in, inside its run folder.
    results_file: str
    #: The file's JSON as the typed run.
    read: Callable[[dict[str, Any]], RunHeader]
    #: Writes the run's report into its folder; the files it wrote.
    write_report: Callable[[Path, Any], list[Path]]
    #: One line of `playground runs`: how many targets, and whether the run can be trusted.
    count: Callable[[Any], int]
    state: Callable[[Any], str]
    #: A stored run as its compact record (docs/runs/<run id>.json), the machine given in words;
    #: the record's class (its `READS` hold this kind's word) and its schema tables.
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


def _bench_report(run_dir: Path, run: Run) -> list[Path]:
    from playground.report import benchpage  # the bench's charts: only for a bench run

    return benchpage.write_report(run_dir=run_dir, results=run)


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


_BENCH = Kind(
    name="bench",
    package="bench",
    record=bench_record.from_run,
    record_class=bench_record.BenchRecord,
    record_schema=bench_record.SCHEMA_CLASSES,
    run_class=Run,
    results_file=Run.FILE,
    read=_read_bench,
    write_report=_bench_report,
    count=lambda r: len(r.entries()),
    state=_bench_state,
    commands=("playground.commands.bench",),
    schema=RUN_SCHEMA_CLASSES,
)

KINDS: tuple[Kind, ...] = (
    _BENCH,
    # A bench run swept over the machine's cores: the bench's results, record and report.
    replace(
        _BENCH, name="scale", record_schema=(), commands=("playground.commands.scale",), schema=()
    ),
    Kind(
        name="story",
        package="story",
        record=story_record.from_run,
        record_class=story_record.RunRecord,
        record_schema=story_record.SCHEMA_CLASSES,
        run_class=StoryRun,
        results_file=StoryRun.FILE,
        read=StoryRun.from_json,
        write_report=_story_report,
        count=lambda r: len(r.targets),
        state=_story_state,
        commands=("playground.commands.story",),
        schema_intro=STORY_SCHEMA_INTRO,
        schema=STORY_SCHEMA_CLASSES,
    ),
    Kind(
        name="predict",
        package="predict",
        record=predict_record.from_run,
        record_class=predict_record.PredictRecord,
        record_schema=predict_record.SCHEMA_CLASSES,
        run_class=StoryRun,
        results_file=StoryRun.FILE,
        read=StoryRun.from_json,
        write_report=_story_report,
        count=lambda r: len(r.targets),
        state=_story_state,
        commands=("playground.commands.predict",),
    ),
    Kind(
        name="faults",
        package="faults",
        record=faults_record.from_run,
        record_class=faults_record.FaultsRecord,
        record_schema=faults_record.SCHEMA_CLASSES,
        run_class=FaultsRun,
        results_file=FaultsRun.FILE,
        read=FaultsRun.from_json,
        write_report=lambda run_dir, r: [faults_render.write_report(run_dir=run_dir, run=r)],
        count=lambda r: len(r.runs),
        state=lambda r: f"problems: {len(r.problems())}" if r.problems() else "ok",
        commands=("playground.commands.faults",),
        schema_intro=FAULT_SCHEMA_INTRO,
        schema=FAULT_SCHEMA_CLASSES,
    ),
    # The story measured on a Swarm stack: a story run's results.
    Kind(
        name="swarm",
        package="swarm",
        # Its record is a story run's, each target with the stack it ran on.
        record=story_record.from_run,
        record_class=story_record.RunRecord,
        record_schema=(),
        run_class=StoryRun,
        results_file=StoryRun.FILE,
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


def kind_named(word: object) -> Kind | None:
    """The kind of that word, or None."""
    return next((k for k in KINDS if k.name == word), None)


def load(path: Path) -> tuple[Kind, RunHeader]:
    """A run's results file (a run folder is accepted too) as its kind and typed run."""
    path = _file(path)
    data = runstore.read(path)
    kind = kind_named(data["kind"])
    if kind is None:
        raise ResultsError(f"{path}: kind {data['kind']!r} is not one this version knows")
    try:
        return kind, kind.read(data)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None


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
    kind = kind_named(data.get("kind"))
    if kind is None:
        raise RecordError(f"{path.name}: kind {data.get('kind')!r} is not one this version records")
    return records.load_as(kind.record_class, path, data)


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

"""results.json in and out: written after every finished measurement, atomically.

A run lives in `results/<run-id>/`: its typed results (each kind's own run, a
:class:`~playground.core.results.RunHeader`: schema in docs/results-schema.md) in its kind's file,
the raw output under `raw/`, and the report. Every kind goes through one :class:`RunStore`,
which holds the typed run and writes it whole after every change: atomically (to a temporary
file, then renamed over the old one), so an interrupted run keeps exactly what it finished and
never leaves half a file; `--resume` continues a bench run from it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from playground.core.jsonmodel import ResultsError
from playground.core.results import RESULTS_FILE, SCHEMA_VERSION, Run, with_kind
from playground.core.verdicts import upgrade

__all__ = [
    "SCHEMA_VERSION",
    "ResultsError",
    "RunStore",
    "StoredRun",
    "load",
    "resolve_run",
]


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def write_json_atomic(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2, sort_keys=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def point_latest(results_dir: Path, run_dir: Path) -> None:
    """Make `results/latest` point at run_dir, replacing any older link atomically."""
    link = results_dir / "latest"
    tmp = results_dir / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, link)


def read(path: Path) -> dict[str, Any]:
    """A run's results file as JSON, checked to be one of the store's schema version, its kind
    named (`results.with_kind`)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(f"no results at {path}") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise ResultsError(f"{path} is not a playground results file (schema {SCHEMA_VERSION})")
    return with_kind(data)


def load(path: Path) -> Run:
    """A bench or scale run's results.json (a run directory is accepted too) as the typed
    model, checked, with a clear error if unusable."""
    if path.is_dir():
        path = path / RESULTS_FILE
    data = read(path)
    if data["kind"] not in ("bench", "scale") or not isinstance(data.get("scenarios"), list):
        raise ResultsError(f"{path} is not a bench or scale run (kind {data['kind']!r})")
    try:
        return upgrade(Run.from_json(data))
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None


def resolve_run(results_dir: Path, ref: str, *, files: Sequence[str] = (RESULTS_FILE,)) -> Path:
    """A run by id, by 'latest', or by path: a folder holding one of `files`, or a file."""
    for candidate in (Path(ref), results_dir / ref):
        if any((candidate / name).exists() for name in files) or (
            candidate.suffix == ".json" and candidate.exists()
        ):
            return candidate.resolve()
    raise ResultsError(f"no run {ref!r} (looked in {results_dir})")


def now() -> str:
    """The time a run starts or finishes, as every run's header keeps it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class StoredRun(Protocol):
    """What the store keeps of any kind of run: a typed run with one JSON form, saved as its
    kind's file (``FILE``) in its folder."""

    FILE: ClassVar[str]
    run_id: str
    finished_at: str | None

    def to_json(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=StoredRun)


class RunStore(Generic[R]):
    """One run's folder and its typed results, written to disk whole after every change."""

    def __init__(self, run_dir: Path, run: R) -> None:
        self.run_dir = run_dir
        self.run = run

    @property
    def path(self) -> Path:
        return self.run_dir / self.run.FILE

    @property
    def raw_dir(self) -> Path:
        path = self.run_dir / "raw"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @classmethod
    def create_run(cls, *, results_dir: Path, run: R) -> RunStore[R]:
        """A new run folder holding the typed run as it stands (its header, nothing measured).
        ``results/latest`` points at it when it is a run ``playground report`` reads."""
        run_dir = results_dir / run.run_id
        if run_dir.exists():
            raise ResultsError(
                f"{run_dir} exists already; use --resume {run.run_id} to continue it"
            )
        run_dir.mkdir(parents=True)
        store = cls(run_dir, run)
        store.save()
        if run.FILE == RESULTS_FILE:
            point_latest(results_dir, run_dir)
        return store

    @staticmethod
    def resume(*, results_dir: Path, ref: str) -> RunStore[Run]:
        """A bench or scale run that was interrupted, to go on with (unfinished again)."""
        run_dir = resolve_run(results_dir, ref)
        store = RunStore(run_dir, load(run_dir))
        store.run.finished_at = None
        return store

    def save(self) -> None:
        """Replace what is on disk with the run as it stands, atomically."""
        write_json_atomic(self.path, self.run.to_json())

    def save_run(self, run: R) -> None:
        """Hold ``run`` from now on, and save it."""
        self.run = run
        self.save()

    def finish(self) -> None:
        """The run is finished: its time stamped, and saved."""
        self.run.finished_at = now()
        self.save()


def runner_lock_path() -> Path:
    """The machine-wide runner lock: the ports and containers are the machine's, not a results
    directory's, so two runners must not overlap even with different --results-dir.
    ``PLAYGROUND_LOCK`` moves it (tests do, to stay out of a real run's way)."""
    return Path(
        os.environ.get("PLAYGROUND_LOCK")
        or Path(tempfile.gettempdir()) / "flask-playground-runner.lock"
    )


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    try:
        fh = open(lock_path, "a+")
    except OSError as exc:
        raise ResultsError(f"cannot open the runner lock {lock_path}: {exc.strerror}") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise ResultsError(
                f"another playground run is in progress ({holder}); wait for it to finish "
                "or stop it first: two runs would fight over the same ports and containers"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()


@contextmanager
def exclusive(results_dir: Path) -> Iterator[None]:
    """Only one runner at a time on this machine (and per results directory): two would fight
    over the same ports and containers, or write the same files."""
    results_dir.mkdir(parents=True, exist_ok=True)
    with _locked(runner_lock_path()), _locked(results_dir / ".lock"):
        yield

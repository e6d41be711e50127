"""results.json in and out: written after every finished measurement, atomically.

A run lives in `results/<run-id>/`: `results.json` (a serialised :class:`playground.model.Run`,
schema in docs/results-schema.md), the raw
load-generator output under `raw/`, and the report. The file is replaced atomically (written
to a temporary file, then renamed over the old one), so an interrupted run keeps exactly what
it finished and never leaves half a file; `--resume` continues from it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playground.jsonmodel import ResultsError
from playground.model import SCHEMA_VERSION, Entry, Run
from playground.storymodel import StoryRun
from playground.verdicts import upgrade

__all__ = ["SCHEMA_VERSION", "ResultsError", "RunStore", "load", "load_run", "resolve_run"]

#: Every kind of run a results.json can hold, by its `kind` key (a bench run has none).
AnyRun = Run | StoryRun


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


def _read(path: Path) -> tuple[Path, dict[str, Any]]:
    if path.is_dir():
        path = path / "results.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(f"no results at {path}") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise ResultsError(f"{path} is not a playground results file (schema {SCHEMA_VERSION})")
    return path, data


def load(path: Path) -> dict[str, Any]:
    """Read a bench or scale run's results.json (a run directory is accepted too), with a
    clear error if unusable: the file is checked against the model, and its JSON returned."""
    path, data = _read(path)
    if data.get("kind", "bench") != "bench" or not isinstance(data.get("scenarios"), list):
        raise ResultsError(f"{path} is not a bench run (kind {data.get('kind', 'bench')!r})")
    try:
        Run.from_json(data)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None
    return data


def load_run(path: Path) -> AnyRun:
    """Any run's results.json as the typed model, by its kind (a story run or a bench run)."""
    path, data = _read(path)
    try:
        if data.get("kind") == StoryRun.KIND:
            return StoryRun.from_json(data)
        if not isinstance(data.get("scenarios"), list):
            raise ResultsError(f"kind {data.get('kind')!r} is not one this version knows")
        return upgrade(Run.from_json(data))
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None


def resolve_run(results_dir: Path, ref: str) -> Path:
    """A run by id, by 'latest', or by path."""
    for candidate in (Path(ref), results_dir / ref):
        if (candidate / "results.json").exists() or (
            candidate.suffix == ".json" and candidate.exists()
        ):
            return candidate.resolve()
    raise ResultsError(f"no run {ref!r} (looked in {results_dir})")


def entry_key(entry: dict[str, Any] | Entry) -> tuple[str, int]:
    if isinstance(entry, Entry):
        return entry.key
    return (entry["name"], int(entry["concurrency"]))


class RunStore:
    """The results of one run, saved after every change."""

    def __init__(self, run_dir: Path, data: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.data = data

    @property
    def path(self) -> Path:
        return self.run_dir / "results.json"

    @property
    def raw_dir(self) -> Path:
        path = self.run_dir / "raw"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @classmethod
    def create(
        cls,
        *,
        results_dir: Path,
        run_id: str,
        header: dict[str, Any],
        body: dict[str, Any] | None = None,
    ) -> RunStore:
        """A new run folder with its results.json: the header, then the body of its kind
        (a bench run's by default: no calibration and no scenarios yet)."""
        return cls._new(
            results_dir,
            {
                "schema_version": SCHEMA_VERSION,
                "run_id": run_id,
                **header,
                "finished_at": None,
                **(body if body is not None else {"calibration": None, "scenarios": []}),
            },
        )

    @classmethod
    def _new(cls, results_dir: Path, data: dict[str, Any]) -> RunStore:
        run_dir = results_dir / data["run_id"]
        if run_dir.exists():
            raise ResultsError(
                f"{run_dir} exists already; use --resume {data['run_id']} to continue it"
            )
        run_dir.mkdir(parents=True)
        store = cls(run_dir, data)
        store.save()
        point_latest(results_dir, run_dir)
        return store

    @classmethod
    def create_run(cls, *, results_dir: Path, run: AnyRun) -> RunStore:
        """A new run folder holding the typed run as it stands (its header, nothing measured)."""
        return cls._new(results_dir, run.to_json())

    @classmethod
    def resume(cls, *, results_dir: Path, ref: str) -> RunStore:
        run_dir = resolve_run(results_dir, ref)
        store = cls(run_dir, load(run_dir))
        store.data["finished_at"] = None
        return store

    def done(self) -> set[tuple[str, int]]:
        keys = {entry_key(e) for e in self.data["scenarios"] if not e.get("error")}
        calibration = self.data.get("calibration")
        if calibration and not calibration.get("error"):
            keys.add(entry_key(calibration))
        return keys

    @property
    def run(self) -> Run:
        """What is on disk so far, as the typed model."""
        return upgrade(Run.from_json(self.data))

    def add(self, entry: Entry) -> None:
        if entry.kind == "calibration":
            self.data["calibration"] = entry.to_json()
        else:
            # A resumed run replaces the failed attempt of the same measurement.
            key = entry.key
            self.data["scenarios"] = [e for e in self.data["scenarios"] if entry_key(e) != key]
            self.data["scenarios"].append(entry.to_json())
        self.save()

    def save(self) -> None:
        write_json_atomic(self.path, self.data)

    def save_run(self, run: AnyRun) -> None:
        """Replace what is on disk with the typed run, atomically."""
        self.data = run.to_json()
        self.save()


def runs(results_dir: Path) -> list[tuple[Path, AnyRun | ResultsError]]:
    """Every run folder under `results_dir`, oldest first, with its run (or why it cannot be
    read)."""
    found: list[tuple[Path, AnyRun | ResultsError]] = []
    for path in sorted(results_dir.glob("*/results.json")):
        if path.parent.is_symlink():
            continue  # results/latest
        try:
            found.append((path.parent, load_run(path)))
        except ResultsError as exc:
            found.append((path.parent, exc))
    return found


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

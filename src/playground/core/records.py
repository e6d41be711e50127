"""The compact run record every kind of run gives (docs/runs/<run id>.json), and its one JSON
form.

A page cites a run by its id; the run's own results stay under results/, which git does not
keep. A record keeps what a page reads of a run and nothing raw: the header every kind shares
(:class:`RecordHeader`: the run's id and kind, its command, date, settings, a scrubbed
environment and the machine in a few words) and one list of rows per kind, declared by the
kind's record class (the story's in `incident/runrecords.py`, the bench's and the scale's in
`bench/record.py`, the faults' in `faults/runrecord.py`, the model's in `incident/predictrecord.py`, beside the story's, so that reading one imports no simulator).

One JSON form, written by :func:`dumps`: sorted keys, one line per row, so the same record is the
same bytes. What is machine-specific (the kernel, the platform string, the host's name, a path
on the machine) stays out: :func:`scrubbed` and :func:`scrub_text`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from playground.core import jsonmodel
from playground.core.errors import UsageError
from playground.core.jsonmodel import doc
from playground.core.notation import DASH
from playground.core.results import Environment, RunHeader, with_kind

#: Where the records live, beside the pages that cite them.
RECORDS_DIR = Path(__file__).resolve().parents[3] / "docs" / "runs"
RECORDED, TRANSCRIBED = "recorded", "transcribed"

#: A path on the machine (`/tmp/x`, `/home/me/results`), not one inside a URL (`http://h:80/`).
_PATH = re.compile(r"(?<![\w:/.@-])/[^\s'\"]+")


class RecordError(UsageError):
    """A run record that cannot be written or read; the message says which and why."""


@dataclass(frozen=True)
class RecordHeader:
    """What every run record starts with, whatever the kind."""

    #: The `kind` words of the records this class reads; its lists of rows.
    READS: ClassVar[tuple[str, ...]] = ()
    ROWS: ClassVar[tuple[str, ...]] = ()

    run_id: str = doc("the run's id, as the pages cite it", "")
    kind: str = doc("the run's kind: bench, scale, faults, story, predict or swarm", "")
    source: str = doc(
        "`recorded` (written from the run's results file) or `transcribed` (copied from the "
        "pages' tables: the results were not kept)",
        TRANSCRIBED,
    )
    what: str | None = doc("what the run measured, in a few words")
    command: str | None = doc("the command that made the run, machine paths left out")
    date: str | None = doc("when it ran (UTC), as precisely as known")
    machine: str | None = doc("what it ran on, in a few words (`playground record --machine`)")
    environment: Environment | None = doc(
        "the run's environment without what names the machine (no kernel, platform string or "
        "host name); absent in records transcribed from the pages",
        omit_none=True,
    )
    settings: dict[str, Any] = doc(
        "the run's settings, as its kind's model names them", factory=dict
    )
    pages: list[str] = doc("the pages that cite it", factory=list)

    def problems(self) -> list[str]:
        """What makes the record unreadable beyond its types (none: it reads)."""
        return []

    def tables(self) -> list[tuple[str, list[str], list[list[str]]]]:
        """Each list of rows as a table to print: its name, its columns (the keys some row
        has) and its cells."""
        found = []
        for name in self.ROWS:
            rows = [_dropped_nulls(jsonmodel.to_json(r)) for r in getattr(self, name)]
            columns = list(dict.fromkeys(k for row in rows for k in row))
            found.append((name, columns, [[cell(row.get(c)) for c in columns] for row in rows]))
        return found


def cell(value: Any) -> str:
    """A value of a record as a table shows it."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(cell(v) for v in value) or DASH
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items()) or DASH
    return str(value)


Record = TypeVar("Record", bound=RecordHeader)


def scrub_text(text: str | None) -> str | None:
    """`text` with every path on the machine cut to its last part (`/tmp/r/x.json`: `x.json`)."""
    if text is None:
        return None
    return _PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1] or "/", text)


def header(run: RunHeader, *, machine: str) -> dict[str, Any]:
    """The header fields of a stored run's record, every kind alike: its id, its kind, where
    it came from, its command and environment scrubbed of the machine, its date."""
    return {
        "run_id": run.run_id,
        "kind": run.kind,
        "source": RECORDED,
        "command": scrub_text(run.command),
        "date": run.started_at,
        "machine": machine,
        "environment": scrubbed(run.environment),
    }


def scrubbed(env: Environment | None) -> Environment | None:
    """A run's environment without what names the machine: its kernel, platform string, host
    name and keys this version does not know."""
    if env is None:
        return None
    return replace(env, kernel=None, platform=None, hostname=None, extra={})


def machine_of(env: Environment | None) -> str:
    """A run's machine in a few words: its CPUs and Docker's version (no kernel, no paths)."""
    if env is None:
        return "not recorded"
    words = [f"{env.cpu_count}-core" if env.cpu_count else "CPUs not recorded"]
    if env.docker_version:
        words.append(f"Docker {env.docker_version.split('+')[0]}")
    return ", ".join(words)


def rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def dumps(record: RecordHeader) -> str:
    """The record's one JSON form: sorted keys, a line per row of each of its lists."""
    data = jsonmodel.to_json(record)
    head = {k: v for k, v in data.items() if k not in record.ROWS}
    items = [(k, json.dumps(v, sort_keys=True)) for k, v in head.items()]
    for name in (n for n in record.ROWS if n in data):
        rows = [json.dumps(_dropped_nulls(row), sort_keys=True) for row in data[name]]
        items.append(
            (name, "[\n" + ",\n".join(f"    {r}" for r in rows) + "\n  ]" if rows else "[]")
        )
    items.sort()
    body = ",\n".join(f"  {json.dumps(k)}: {v}" for k, v in items)
    return "{\n" + body + "\n}\n"


def _dropped_nulls(row: Any) -> Any:
    return {k: v for k, v in row.items() if v is not None} if isinstance(row, dict) else row


def read(path: Path) -> dict[str, Any]:
    """A record file's JSON object, its kind named (`results.with_kind`)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path.name}: cannot read a run record: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path.name}: a run record is a JSON object")
    return with_kind(data)


def load_as(cls: type[Record], path: Path, data: dict[str, Any] | None = None) -> Record:
    """A record file as `cls`, checked against the model and against its name."""
    data = read(path) if data is None else data
    record: Record = jsonmodel.from_json(cls, data, path.name)
    if record.run_id != path.stem:
        raise RecordError(f"{path.name}: holds run {record.run_id!r}, not {path.stem!r}")
    if record.kind not in cls.READS or record.source not in (RECORDED, TRANSCRIBED):
        raise RecordError(
            f"{path.name}: an unknown kind or source: {record.kind!r}, {record.source!r}"
        )
    if problems := record.problems():
        raise RecordError(f"{path.name}: {'; '.join(problems)}")
    return record


def write(record: RecordHeader, directory: Path) -> Path:
    """The record written as `directory`/<run id>.json; an unwritable folder is a RecordError."""
    path = directory / f"{record.run_id}.json"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(record))
    except OSError as exc:
        raise RecordError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path

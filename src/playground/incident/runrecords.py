"""A compact record of a story run, kept in the repository: docs/runs/<run id>.json.

The pages cite story runs by run id; a run's own results.json stays under results/, which
git does not keep. A record keeps what a page reads of a run (per target and repeat: its
verdict, the visits served during the incident, goodput, the time to recover, the
generator's check) and what the model needs to run the same settings again, and nothing raw.
Each record says where its figures came from (`source`): `recorded`, written from a
results.json by :func:`from_run`; or `transcribed`, copied from a page's own tables because
the run's results were not kept (the figures then have the page's precision, and a figure
the page does not give is absent).

One JSON form, written by :func:`dumps`: sorted keys, one line per target and repeat, so the
same record is the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playground.core import jsonmodel
from playground.core.errors import UsageError
from playground.core.jsonmodel import doc
from playground.core.results import Environment
from playground.incident import held, split
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryRun, StoryTarget

#: Where the records live, beside the pages that cite them.
RECORDS_DIR = Path(__file__).resolve().parents[3] / "docs" / "runs"
RECORDED, TRANSCRIBED = "recorded", "transcribed"
VERDICTS = (held.HELD, held.COLLAPSED, held.NOT_RECOVERED)


class RecordError(UsageError):
    """A run record that cannot be written or read; the message says which and why."""


@dataclass(frozen=True)
class TargetRecord:
    """One target's one measurement through the incident."""

    name: str = doc("target name, as `playground story` and `playground predict` take it", "")
    repeat: int = doc("which measurement of this target (1 to the run's repeats)", 1)
    verdict: str | None = doc(
        "held, collapsed (and recovered within the run) or collapsed and did not recover; "
        "null: the page gives none (a sweep's run)"
    )
    visits_served_during: float | None = doc("share of the visits during the incident served")
    goodput_before: float | None = doc("2xx answers per second before the incident")
    goodput_during: float | None = doc("... during it")
    goodput_after: float | None = doc("... after it")
    recovery_s: float | None = doc("seconds from the incident's end until it recovered")
    attempts_per_visit: float | None = doc("attempts / visits, reloads included")
    send_lag_p99_s: float | None = doc("the generator's send lag, 99th percentile, s")
    send_lag_max_s: float | None = doc("the generator's largest send lag, s")
    valid: bool | None = doc("the generator's self-check: it kept its schedule")
    busiest_share_before: float | None = doc(
        "the busiest Gunicorn worker's share of the connections before the incident"
    )
    note: str | None = doc("what the page says beside the figures, word for word")


@dataclass(frozen=True)
class ModelRow:
    """One row of docs/predict.md's validation: a measurement the model runs again."""

    table: str = doc("the page's table it is a row of (the marker's name)", "")
    label: str = doc("the row's first cell", "")
    position: int = doc("the row's place in its table, from 1", 1)
    target: str = doc("the measured target (`name` of one of `targets`)", "")
    repeat: int = doc("which of its measurements", 1)


@dataclass(frozen=True)
class RunRecord:
    """What a page cites of one run."""

    run_id: str = doc("the run's id, as the pages cite it", "")
    kind: str = doc("story, predict, faults, bench or scale", "")
    source: str = doc(
        "`recorded` (written from the run's results.json) or `transcribed` (copied from the "
        "pages' tables: the results were not kept)",
        TRANSCRIBED,
    )
    what: str | None = doc("what the run measured, in a few words")
    command: str | None = doc("the command that made the run, as the page quotes it")
    date: str | None = doc("when it ran (UTC), as precisely as known")
    machine: str | None = doc("what it ran on, in a few words")
    check: str | None = doc("the generator's check over the whole run, as the page gives it")
    settings: dict[str, Any] = doc(
        "the story's settings that differ from the defaults, as StorySettings names them (checked by `story_settings`)",
        factory=dict,
    )
    targets: list[TargetRecord] = doc("one per target and repeat", factory=list)
    model_rows: list[ModelRow] = doc("the rows docs/predict.md sets beside the model", factory=list)
    pages: list[str] = doc("the pages that cite it", factory=list)

    def story_settings(self) -> StorySettings:
        """The settings the run was measured with, the defaults where the record has none."""
        settings: StorySettings = jsonmodel.from_json(
            StorySettings, dict(self.settings), f"{self.run_id}: settings"
        )
        return settings

    def target(self, name: str, repeat: int) -> TargetRecord:
        found = [t for t in self.targets if t.name == name and t.repeat == repeat]
        if not found:
            raise RecordError(f"{self.run_id}: no target {name!r} repeat {repeat}")
        return found[0]


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _target(t: StoryTarget, *, busiest: float | None) -> TargetRecord:
    s, check = t.summary, t.check
    served = None if s is None else s.visits_served_during
    return TargetRecord(
        name=t.name.removeprefix("story-"),
        repeat=t.repeat,
        verdict=None if s is None else held.outcome(served, s.recovery_s),
        visits_served_during=_rounded(served, 4),
        goodput_before=None if s is None else _rounded(s.goodput_before, 2),
        goodput_during=None if s is None else _rounded(s.goodput_during, 2),
        goodput_after=None if s is None else _rounded(s.goodput_after, 2),
        recovery_s=None if s is None else _rounded(s.recovery_s, 1),
        attempts_per_visit=None if s is None else _rounded(s.amplification, 3),
        send_lag_p99_s=None if check is None else _rounded(check.send_lag_p99_s, 5),
        send_lag_max_s=None if check is None else _rounded(check.send_lag_max_s, 5),
        valid=None if check is None else check.valid,
        busiest_share_before=busiest,
    )


def busiest_share_before(t: StoryTarget) -> float | None:
    """The busiest worker's share of the connections before the incident, by the rule the
    report uses (:mod:`playground.incident.split`); None without per-worker figures."""
    share = split.busiest_share(split.connections_before(t))
    return None if share is None else round(share, 3)


def from_run(run: StoryRun, *, machine: str) -> RunRecord:
    """The record of a stored story run: every target and repeat, and the settings that
    differ from the defaults."""
    if run.predicted:
        raise RecordError(f"{run.run_id} is a prediction, not a measurement: nothing to record")
    defaults = jsonmodel.to_json(StorySettings())
    settings = {
        k: v
        for k, v in jsonmodel.to_json(run.story).items()
        if k in defaults and v != defaults[k] and v is not None
    }
    return RunRecord(
        run_id=run.run_id,
        kind="story",
        source=RECORDED,
        command=run.command,
        date=run.started_at,
        machine=machine,
        settings=settings,
        targets=[_target(t, busiest=busiest_share_before(t)) for t in run.targets],
    )


def machine_of(env: Environment | None) -> str:
    """A run's machine in a few words: its CPUs and Docker's version (no kernel, no paths)."""
    if env is None:
        return "not recorded"
    words = [f"{env.cpu_count}-core" if env.cpu_count else "CPUs not recorded"]
    if env.docker_version:
        words.append(f"Docker {env.docker_version.split('+')[0]}")
    return ", ".join(words)


def dumps(record: RunRecord) -> str:
    """The record's one JSON form: sorted keys, a line per target and per model row."""
    data = jsonmodel.to_json(record)
    lists = {"targets", "model_rows"}
    head = {k: v for k, v in data.items() if k not in lists}
    lines = ["{"]
    items = [(k, json.dumps(v, sort_keys=True)) for k, v in sorted(head.items())]
    for name in sorted(lists):
        rows = [json.dumps(_dropped_nulls(row), sort_keys=True) for row in data[name]]
        items.append(
            (name, "[\n" + ",\n".join(f"    {r}" for r in rows) + "\n  ]" if rows else "[]")
        )
    items.sort()
    lines.append(",\n".join(f"  {json.dumps(k)}: {v}" for k, v in items))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dropped_nulls(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v is not None}


def load(path: Path) -> RunRecord:
    """A record from its file, checked against the model."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path.name}: cannot read a run record: {exc}") from None
    record: RunRecord = jsonmodel.from_json(RunRecord, data, path.name)
    if record.run_id != path.stem:
        raise RecordError(f"{path.name}: holds run {record.run_id!r}, not {path.stem!r}")
    bad = [t.verdict for t in record.targets if t.verdict is not None and t.verdict not in VERDICTS]
    if bad or record.source not in (RECORDED, TRANSCRIBED):
        raise RecordError(f"{path.name}: an unknown verdict or source: {bad or record.source!r}")
    return record


def load_all(directory: Path = RECORDS_DIR) -> list[RunRecord]:
    """Every record under `directory`, by run id."""
    return [load(p) for p in sorted(directory.glob("*.json"))]


#: The record's fields as the schema page lists them.
SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (RunRecord, "RunRecord (docs/runs/<run id>.json)"),
    (TargetRecord, "TargetRecord (each of `targets`)"),
    (ModelRow, "ModelRow (each of `model_rows`)"),
)

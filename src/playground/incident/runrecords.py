"""A compact record of a story run, kept in the repository: docs/runs/<run id>.json.

The pages cite story runs by run id; a run's own results.json stays under results/, which
git does not keep. A record keeps what a page reads of a run (per target and repeat: its
verdict, the visits served during the incident, goodput, the time to recover, the
generator's check) and what the model needs to run the same settings again, and nothing raw.
Each record says where its figures came from (`source`): `recorded`, written from a
results.json by :func:`from_run`; or `transcribed`, copied from a page's own tables because
the run's results were not kept (the figures then have the page's precision, and a figure
the page does not give is absent).

The record's header, its one JSON form (sorted keys, one line per target and repeat) and the
scrubbing of what names the machine are every kind's: :mod:`playground.core.records`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from playground.core import jsonmodel, records
from playground.core.jsonmodel import doc
from playground.core.notation import DASH, percent
from playground.core.records import RECORDED, TRANSCRIBED, RecordError, RecordHeader, dumps
from playground.incident import held, split
from playground.incident.mechanism import Mechanism
from playground.incident.settings import StorySettings
from playground.incident.steprecords import (
    ClosedLoopRecord,
    CrossCheckRecord,
    SweepStepRecord,
    closed_loops,
    crosschecks,
    sweep_steps,
)
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.incident.swarmresults import SwarmShape
from playground.incident.targetresults import StorySummary

__all__ = ["RECORDED", "TRANSCRIBED", "RecordError", "dumps"]

VERDICTS = (held.HELD, held.COLLAPSED, held.NOT_RECOVERED)


@dataclass(frozen=True)
class Footprint:
    """What serving one measurement cost, beside the users' figures: the app's threads and
    memory, and the work done for users who had gone."""

    threads_before: int | None = doc("the app's OS threads at the start")
    threads_peak: float | None = doc("most OS threads of the app")
    memory_peak_mb: float | None = doc("the app's most resident memory, MB")
    nginx_499: int | None = doc("requests nginx logged as 499: their user had gone")
    upstream_calls: int | None = doc("calls the third party answered for requests nginx logged")
    calls_for_nobody: int | None = doc(
        "... of them answered after nginx had ended the request: work for nobody"
    )


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
    tries: int | None = doc(
        "measurements made of it: 1, or more where the self-check failed and it was measured "
        "again (story.run.MAX_TRIES); absent: not kept",
        omit_none=True,
    )
    footprint: Footprint | None = doc(
        "the app's threads and memory and the work for nobody; absent: not kept", omit_none=True
    )
    busiest_share_before: float | None = doc(
        "the busiest Gunicorn worker's share of the connections before the incident"
    )
    mechanism: Mechanism | None = doc(
        "what might decide a collapse, read from the repeat before the incident and at its "
        "onset; absent: not kept",
        omit_none=True,
    )
    note: str | None = doc("what the page says beside the figures, word for word")
    stack: str | None = doc(
        "`playground swarm`: the stack it ran on, e.g. `1 node, 1 replica of flask_app, "
        "2 senders (2 kept their schedule)`"
    )


@dataclass(frozen=True)
class ModelRow:
    """One row of docs/predict.md's validation: a measurement the model runs again."""

    table: str = doc("the page's table it is a row of (the marker's name)", "")
    label: str = doc("the row's first cell", "")
    position: int = doc("the row's place in its table, from 1", 1)
    target: str = doc("the measured target (`name` of one of `targets`)", "")
    repeat: int = doc("which of its measurements", 1)


@dataclass(frozen=True)
class RunRecord(RecordHeader):
    """What a page cites of one story run."""

    READS: ClassVar[tuple[str, ...]] = ("story", "swarm")
    ROWS: ClassVar[tuple[str, ...]] = (
        "closed_loop",
        "crosschecks",
        "model_rows",
        "sweep",
        "targets",
    )

    check: str | None = doc("the generator's check over the whole run, as the page gives it")
    settings: dict[str, Any] = doc(
        "the story's settings that differ from the defaults, as StorySettings names them (checked by `story_settings`)",
        factory=dict,
    )
    targets: list[TargetRecord] = doc("one per target and repeat", factory=list)
    model_rows: list[ModelRow] = doc("the rows docs/predict.md sets beside the model", factory=list)
    sweep: list[SweepStepRecord] = doc(
        "with --sweep: each target at each offered rate", factory=list, omit_empty=True
    )
    closed_loop: list[ClosedLoopRecord] = doc(
        "with --closed-loop: each target's incident under ab", factory=list, omit_empty=True
    )
    crosschecks: list[CrossCheckRecord] = doc(
        "with --cross-check: the generator against oha", factory=list, omit_empty=True
    )

    def problems(self) -> list[str]:
        bad = [
            t.verdict for t in self.targets if t.verdict is not None and t.verdict not in VERDICTS
        ]
        return [f"an unknown verdict: {bad!r}"] if bad else []

    def tables(self) -> list[tuple[str, list[str], list[list[str]]]]:
        """The targets as the story's report reads them, then the sweep's steps, the closed
        loops and the cross-checks where the run has them (the model rows are not shown)."""
        targets = ("targets", list(TARGET_COLUMNS), [_target_cells(t) for t in self.targets])
        others = [
            table
            for table in super().tables()
            if table[0] not in ("targets", "model_rows") and table[2]
        ]
        return [targets, *others] if self.targets or not others else others

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


_rounded = records.rounded


def _target(t: StoryTarget, *, busiest: float | None) -> TargetRecord:
    s, check = t.summary, t.check
    served = None if s is None else s.visits_served_during
    return TargetRecord(
        name=t.name.removeprefix("story-"),
        repeat=t.repeat,
        # A repeat with figures and no verdict (withheld: a node lost under it) keeps none.
        verdict=None
        if s is None or held.was_held(t) is None
        else held.outcome(served, s.recovery_s),
        visits_served_during=_rounded(served, 4),
        goodput_before=None if s is None else _rounded(s.goodput_before, 2),
        goodput_during=None if s is None else _rounded(s.goodput_during, 2),
        goodput_after=None if s is None else _rounded(s.goodput_after, 2),
        recovery_s=None if s is None else _rounded(s.recovery_s, 1),
        attempts_per_visit=None if s is None else _rounded(s.amplification, 3),
        send_lag_p99_s=None if check is None else _rounded(check.send_lag_p99_s, 5),
        send_lag_max_s=None if check is None else _rounded(check.send_lag_max_s, 5),
        valid=None if check is None else check.valid,
        tries=1 + len(t.invalid_tries),
        footprint=None if s is None else _footprint(s),
        busiest_share_before=busiest,
        mechanism=t.mechanism,
        stack=None if t.swarm is None else _stack(t.swarm),
    )


def _footprint(s: StorySummary) -> Footprint:
    return Footprint(
        threads_before=s.threads_before,
        threads_peak=s.peak_threads,
        memory_peak_mb=_rounded(s.peak_rss_mb, 1),
        nginx_499=s.wasted_499,
        upstream_calls=s.upstream_calls,
        calls_for_nobody=s.calls_for_nobody,
    )


def _stack(shape: SwarmShape) -> str:
    app_on = shape.placement.get(shape.app)
    senders_on = [s.node for s in shape.senders if s.node]
    text = (
        f"{shape.nodes} node(s), {shape.replicas} replica(s) of {shape.app}"
        + (f" on {', '.join(app_on)}" if app_on else "")
        + f", {len(shape.senders)} sender(s)"
        + (f" on {', '.join(senders_on)}" if shape.nodes > 1 and senders_on else "")
        + f" ({shape.kept_schedule} kept their schedule)"
    )
    if (lost := shape.lost) is not None:
        how = "drained" if lost.how == "drain" else "stopped"
        at = "" if lost.at_s is None else f" at {lost.at_s:g} s"
        on_it = ", ".join(lost.on_it) or "nothing of the stack"
        text += f"; {lost.node} {how}{at} with {on_it} on it"
    return text


TARGET_COLUMNS = (
    "target",
    "repeat",
    "verdict",
    "served during",
    "goodput/s before → during → after",
    "time to recover",
    "attempts/visit",
    "send lag p99 / max",
    "valid",
)


def _num(value: float | None, unit: str = "") -> str:
    return DASH if value is None else f"{value:g}{unit}"


def _target_cells(t: TargetRecord) -> list[str]:
    lag = (
        DASH
        if t.send_lag_p99_s is None
        else f"{1000 * t.send_lag_p99_s:.1f} / {1000 * (t.send_lag_max_s or 0):.1f} ms"
    )
    return [
        t.name,
        str(t.repeat),
        t.verdict or DASH,
        percent(t.visits_served_during),
        " → ".join(_num(g) for g in (t.goodput_before, t.goodput_during, t.goodput_after)),
        _num(t.recovery_s, " s"),
        _num(t.attempts_per_visit),
        lag,
        records.cell(t.valid),
    ]


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
        **records.header(run, machine=machine),
        settings=settings,
        targets=[_target(t, busiest=busiest_share_before(t)) for t in run.targets],
        sweep=sweep_steps(run),
        closed_loop=closed_loops(run),
        crosschecks=crosschecks(run),
    )


def load(path: Path, data: dict[str, Any] | None = None) -> RunRecord:
    """A story run's record from its file (or its JSON, read already), checked against the
    model."""
    return records.load_as(RunRecord, path, data)


def load_all(directory: Path = records.RECORDS_DIR) -> list[RunRecord]:
    """Every story run's record under `directory`, by run id (the other kinds' are skipped)."""
    found = [(p, records.read(p)) for p in sorted(directory.glob("*.json"))]
    return [load(p, data) for p, data in found if data.get("kind") in RunRecord.READS]


#: The record's fields as the schema page lists them.
SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (RunRecord, "RunRecord (docs/runs/<run id>.json)"),
    (TargetRecord, "TargetRecord (each of `targets`)"),
    (Footprint, "Footprint (`targets[].footprint`)"),
    (ModelRow, "ModelRow (each of `model_rows`)"),
    (SweepStepRecord, "SweepStepRecord (each of `sweep`)"),
    (ClosedLoopRecord, "ClosedLoopRecord (each of `closed_loop`)"),
    (CrossCheckRecord, "CrossCheckRecord (each of `crosschecks`)"),
    (Mechanism, "Mechanism (each of `targets[].mechanism`)"),
)

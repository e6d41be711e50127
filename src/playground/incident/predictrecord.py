"""A prediction's compact record (docs/runs/<run id>.json, :mod:`playground.core.records`): the
story settings it simulated (its seeds among them), and per target its draws and how often
they held, collapsed or did not recover, with the representative draw's figures; a map's
cells (`playground predict TARGET --map`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from playground.core import jsonmodel, records
from playground.core.jsonmodel import doc
from playground.core.records import RecordError, RecordHeader
from playground.incident import held
from playground.incident.oddsresults import MapCell
from playground.incident.storyresults import StoryRun, StoryTarget

_r = records.rounded


@dataclass(frozen=True)
class PredictedTarget:
    """One target as the model predicted it."""

    name: str = doc("target name, as `playground predict` takes it", "")
    repeat: int = doc("which prediction of this target", 1)
    verdict: str | None = doc("the representative draw's: held, collapsed or did not recover")
    visits_served_during: float | None = doc("the representative draw's share served during it")
    goodput_during: float | None = doc("its 2xx answers per second during the incident")
    recovery_s: float | None = doc("its seconds to recover (null: not within the run)")
    draws: int | None = doc("simulated repeats (null: one, no odds)")
    held: int | None = doc("draws that held")
    collapsed: int | None = doc("draws that collapsed and recovered")
    not_recovered: int | None = doc("draws that collapsed and did not recover")
    recovery_median_s: float | None = doc("median time to recover over the draws (null: censored)")
    share_pinned: bool | None = doc("every draw at the share `--busiest-share` set")
    threshold_share: float | None = doc("a gthread pool's busiest share where P(held) crosses 1/2")
    error: str | None = doc("why the model could not predict this target")


@dataclass(frozen=True)
class PredictedDelay:
    """With `--sweep delay`: one pool at one incident delay, as the model predicted it."""

    name: str = doc("target name", "")
    incident_delay: float = doc("the third party's time during the incident, s", 0.0)
    held: bool | None = doc("at least the held share of the visits during it served")
    recovered: bool | None = doc("back within the run after it")
    recovery_s: float | None = doc("seconds it took, from the incident's end")
    visits_served_during: float | None = doc("share of the visits during it served")


@dataclass(frozen=True)
class PredictRecord(RecordHeader):
    """What a page cites of a prediction (`playground predict`)."""

    READS: ClassVar[tuple[str, ...]] = ("predict",)
    ROWS: ClassVar[tuple[str, ...]] = ("cells", "delays", "targets")

    targets: list[PredictedTarget] = doc("one per target and repeat", factory=list)
    cells: list[MapCell] = doc("with --map: P(collapse) per arrival rate and delay", factory=list)
    delays: list[PredictedDelay] = doc(
        "with --sweep delay: each pool at each incident delay", factory=list
    )


def _target(t: StoryTarget) -> PredictedTarget:
    s, odds = t.summary, t.odds
    served = None if s is None else s.visits_served_during
    counts: dict[str, int] = {}
    if odds is not None and odds.draws:
        counts = {
            "held": odds.frequency(held.HELD).k,
            "collapsed": odds.frequency(held.COLLAPSED).k,
            "not_recovered": odds.frequency(held.NOT_RECOVERED).k,
        }
    return PredictedTarget(
        name=t.name.removeprefix("story-"),
        repeat=t.repeat,
        verdict=None if s is None else held.outcome(served, s.recovery_s),
        visits_served_during=_r(served, 4),
        goodput_during=None if s is None else _r(s.goodput_during, 2),
        recovery_s=None if s is None else _r(s.recovery_s, 1),
        draws=None if odds is None else len(odds.draws),
        recovery_median_s=None if odds is None else _r(odds.recovery_quantile(0.5), 1),
        share_pinned=None if odds is None else odds.share_pinned,
        threshold_share=None if odds is None else _r(odds.threshold_share, 3),
        error=t.error,
        **counts,
    )


def from_run(run: StoryRun, *, machine: str) -> PredictRecord:
    """The record of a stored prediction: its whole story settings, every target, a map's cells."""
    if not run.predicted:
        raise RecordError(f"{run.run_id} is a measurement, not a prediction")
    return PredictRecord(
        **records.header(run, machine=machine),
        settings=jsonmodel.to_json(run.story),
        targets=[_target(t) for t in run.targets],
        cells=[] if run.odds_map is None else list(run.odds_map.cells),
        delays=[] if run.cliff is None else _delays(run),
    )


def _delays(run: StoryRun) -> list[PredictedDelay]:
    return [
        PredictedDelay(
            name=c.name.removeprefix("story-"),
            incident_delay=d.incident_delay,
            held=d.held,
            recovered=d.recovered,
            recovery_s=_r(d.recovery_s, 1),
            visits_served_during=_r(d.visits_served_during, 4),
        )
        for c in (run.cliff.targets if run.cliff else [])
        for d in c.delays
    ]


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (PredictRecord, "PredictRecord (a prediction's record)"),
    (PredictedTarget, "PredictedTarget (each of `targets`)"),
    (MapCell, "MapCell (each of `cells`)"),
    (PredictedDelay, "PredictedDelay (each of `delays`)"),
)


def load_all(directory: Path = records.RECORDS_DIR) -> list[PredictRecord]:
    """Every prediction's record under `directory`, by run id (the other kinds' skipped)."""
    found = [(p, records.read(p)) for p in sorted(directory.glob("*.json"))]
    return [
        records.load_as(PredictRecord, p, data)
        for p, data in found
        if data.get("kind") in PredictRecord.READS
    ]

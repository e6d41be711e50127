"""A fault run's compact record (docs/runs/<run id>.json, :mod:`playground.core.records`): per
fault and target, the verdict the report gives (`ok`, or the problems found) and the figures
it reads it from; a fault that could not run, with why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from playground.core import jsonmodel, records
from playground.core.jsonmodel import doc
from playground.core.records import RecordHeader
from playground.faults.registry import fault_type
from playground.faults.results import (
    FaultFailed,
    FaultsRun,
    OutageVerdict,
    OverloadVerdict,
    SlowdownVerdict,
    Verdict,
)

_r = records.rounded


@dataclass(frozen=True)
class FaultTargetRecord:
    """One target through one fault (or a fault that could not run)."""

    fault: str = doc("upstream-slowdown, upstream-outage, db-outage or overload", "")
    compose_file: str = doc("the scenario's compose file", "")
    name: str | None = doc("the target (null: the fault could not run)")
    concurrency: int | None = doc("probe clients (overload: ab's -c)")
    verdict: str = doc("`ok`, or the problems found, one sentence each joined by `; `", "")
    requests: int | None = doc("probe requests in all (overload: ab's complete requests)")
    kinds: dict[str, int] = doc('answers by kind: "200", "502", "timeout", ...', factory=dict)
    figures: dict[str, float | None] = doc(
        "the fault's own figures, s, requests/s or requests (a number with a point): a slowdown's medians before, slow and after "
        "and its time to settle; an outage's longest answer while down, its bound and its time "
        "to recover; an overload's ab requests/s, failures, p99 and the drain",
        factory=dict,
    )
    stuck: bool | None = doc("the burst after the fault took too much longer: capacity was lost")
    error: str | None = doc("why the fault could not run")


@dataclass(frozen=True)
class FaultsRecord(RecordHeader):
    """What a page cites of a fault run (`playground faults`)."""

    READS: ClassVar[tuple[str, ...]] = ("faults",)
    ROWS: ClassVar[tuple[str, ...]] = ("targets",)

    targets: list[FaultTargetRecord] = doc("one per fault and target", factory=list)


def slowdown_figures(t: SlowdownVerdict) -> dict[str, float | None]:
    ph = t.phases
    medians = {f"p50_{p}_s": _r(ph[p].p50_s, 3) for p in ("before", "slow", "after") if p in ph}
    return {**medians, "settle_s": _r(t.settle_s, 1), "slow_delay_s": t.slow_delay}


def outage_figures(t: OutageVerdict) -> dict[str, float | None]:
    return {
        "longest_while_down_s": _r(t.longest_while_down_s, 2),
        "answer_bound_s": t.answer_bound_s,
        "recover_s": _r(t.recover_s, 1),
    }


def overload_figures(t: OverloadVerdict) -> dict[str, float | None]:
    ab = t.ab.figures
    return {
        "ab_rps": None if ab is None else _r(ab.rps, 2),
        "ab_failed": None if ab is None else float(ab.failed),
        "ab_non_2xx": None if ab is None else float(ab.non_2xx),
        "ab_p99_ms": None if ab is None else ab.latency_ms.get("p99"),
        "probe_p50_s": _r(t.probe.p50_s, 3),
        "drain_s": _r(t.drain_s, 1),
    }


def probe_counts(t: SlowdownVerdict | OutageVerdict) -> tuple[int | None, dict[str, int]]:
    """Requests in all and the answers by kind, as the prober counted them."""
    return t.requests, t.kinds


def overload_counts(t: OverloadVerdict) -> tuple[int | None, dict[str, int]]:
    """An overload's: ab's requests in all and its regular clients' answers by kind."""
    return (t.ab.figures.complete if t.ab.figures else None), t.probe.kinds


def _target(fault: str, compose_file: str, t: Verdict) -> FaultTargetRecord:
    problems = t.aftermath.problems
    kind = fault_type(fault)
    requests, kinds = kind.counts(t)
    return FaultTargetRecord(
        fault=fault,
        compose_file=compose_file,
        name=t.probed.name,
        concurrency=t.probed.concurrency,
        verdict="; ".join(problems) if problems else "ok",
        requests=requests,
        kinds=kinds,
        figures=kind.figures(t),
        stuck=t.aftermath.stuck,
    )


def from_run(run: FaultsRun, *, machine: str) -> FaultsRecord:
    """The record of a stored fault run: every fault and target, the settings as stored."""
    rows = []
    for record in run.runs:
        if isinstance(record, FaultFailed):
            error = records.scrub_text(record.error)
            rows.append(
                FaultTargetRecord(
                    record.fault, record.compose_file, verdict="could not run", error=error
                )
            )
            continue
        rows += [_target(record.run.fault, record.compose_file, t) for t in record.run.targets]
    return FaultsRecord(
        **records.header(run, machine=machine),
        settings={} if run.settings is None else jsonmodel.to_json(run.settings),
        targets=rows,
    )


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (FaultsRecord, "FaultsRecord (a fault run's record)"),
    (FaultTargetRecord, "FaultTargetRecord (each of `targets`)"),
)

"""A bench or scale run's compact record (docs/runs/<run id>.json, :mod:`playground.core.records`):
per entry the figures the report shows (throughput, latency percentiles, threads, memory, CPU),
its verdict and why it is not valid; the run's settings; the tools' versions in its
environment. A scale run's entries are its points (a target at one concurrency), its probe
among them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from playground.core import jsonmodel, records
from playground.core.jsonmodel import doc
from playground.core.records import RecordHeader
from playground.core.results import Entry, Run

_r = records.rounded


@dataclass(frozen=True)
class EntryRecord:
    """One entry of a bench run, or one point of a scale run: a target at one load."""

    name: str = doc("target name from the registry", "")
    part: str = doc("calibration, scenario, variant, demo, ... (`kind` of the entry) or probe", "")
    concurrency: int = doc("ab/wrk -c", 0)
    requests: int | None = doc("ab -n")
    delay: float | None = doc("upstream delay, s")
    tool: str | None = doc("ab, wrk or wrk-t12")
    rps: float | None = doc("the load tool's requests/s (median over repeats)")
    steady_rps: float | None = doc("c / mean response time where the run was steady")
    ideal_rps: float | None = doc("c / delay: a fully parallel server's rate")
    efficiency: float | None = doc("steady_rps / ideal_rps")
    time_taken_s: float | None = doc("the load tool's run time, s")
    latency_ms: dict[str, float | None] = doc("p50, p90, p99, max, ms", factory=dict)
    mean_latency_ms: float | None = doc("mean response time, ms")
    failed: int | None = doc("failed requests")
    non_2xx: int | None = doc("non-2xx answers")
    threads_before: int | None = doc("threads before the load")
    threads_peak: int | None = doc("most threads during the load")
    processes: int | None = doc("most processes during the load")
    rss_before_mb: float | None = doc("resident memory before the load, MB")
    rss_peak_mb: float | None = doc("most resident memory during the load, MB")
    rss_per_request_kb: float | None = doc("memory per request in flight, kB")
    cpu_peak_pct: float | None = doc("highest CPU sample, 100 = one core")
    cpu_ms_per_request: float | None = doc("CPU per request served, ms")
    loadgen_saturated: bool | None = doc("the load generator used a whole core")
    shape: str | None = doc("serialised, capped or concurrent")
    keeps_scaling: bool | None = doc("a scale point: valid and near the ideal")
    repeats: int | None = doc("measurements of the load (null: one)")
    spread: float | None = doc("(max - min) / median of the headline figure over the repeats")
    valid: bool = doc("no failures, no non-2xx, no saturation, no restart", False)
    invalid_reasons: list[str] = doc("why the entry is not valid", factory=list)
    skipped: bool | None = doc("not run: the mode had stopped scaling (null: run)")
    error: str | None = doc("why the entry could not be measured")


@dataclass(frozen=True)
class BenchRecord(RecordHeader):
    """What a page cites of a bench run (`playground run`) or a scale run (`playground scale`)."""

    READS: ClassVar[tuple[str, ...]] = ("bench", "scale")
    ROWS: ClassVar[tuple[str, ...]] = ("entries",)

    entries: list[EntryRecord] = doc(
        "the calibration, every entry in the order measured, and a scale run's probe", factory=list
    )


def _entry(e: Entry, part: str) -> EntryRecord:
    return EntryRecord(
        name=e.name,
        part=part,
        concurrency=e.concurrency,
        requests=e.requests,
        delay=e.delay,
        tool=e.tool,
        rps=_r(e.rps, 2),
        steady_rps=_r(e.steady_rps, 2),
        ideal_rps=_r(e.ideal_rps, 2),
        efficiency=_r(e.efficiency, 3),
        time_taken_s=_r(e.time_taken_s, 3),
        latency_ms={k: _r(v, 1) for k, v in e.latency_ms.items()},
        mean_latency_ms=_r(e.mean_latency_ms, 1),
        failed=e.failed,
        non_2xx=e.non_2xx,
        threads_before=e.threads_before,
        threads_peak=e.threads_peak,
        processes=e.processes,
        rss_before_mb=_r(e.rss_before_mb, 1),
        rss_peak_mb=_r(e.rss_peak_mb, 1),
        rss_per_request_kb=_r(e.rss_per_request_kb, 1),
        cpu_peak_pct=_r(e.cpu_peak_pct, 1),
        cpu_ms_per_request=_r(e.cpu_ms_per_request, 3),
        loadgen_saturated=e.loadgen_saturated,
        shape=e.shape,
        keeps_scaling=e.keeps_scaling,
        repeats=len(e.repeats) if len(e.repeats) > 1 else None,
        spread=None if e.spread is None else _r(e.spread.relative, 3),
        valid=e.valid,
        invalid_reasons=list(e.invalid_reasons),
        skipped=e.skipped or None,
        error=records.scrub_text(e.error),
    )


def from_run(run: Run, *, machine: str) -> BenchRecord:
    """The record of a stored bench or scale run: every entry, its settings as stored."""
    entries = [_entry(e, e.kind) for e in run.entries()]
    if run.probe is not None:
        entries.append(_entry(run.probe, "probe"))
    settings = {} if run.settings is None else jsonmodel.to_json(run.settings)
    return BenchRecord(
        **records.header(run, machine=machine),
        settings=settings,
        entries=entries,
    )


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (BenchRecord, "BenchRecord (a bench or scale run's record)"),
    (EntryRecord, "EntryRecord (each of `entries`)"),
)

"""One bench entry from its repeats: the figures, the findings and the verdicts, decided once.

Every entry is made by :func:`new_entry`, which decides its verdicts
(:func:`playground.core.verdicts.verdicts`); a measured one gets its figures from
:func:`measured_figures`, which reads the median repeat for latency and samples and every
repeat for the spread.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from playground.bench import diagnosis
from playground.bench.steady import Timeline, waves
from playground.core import load as loadmod
from playground.core.results import Entry, Finding, Repeat, Sample, Spread
from playground.core.sampling import Series, combine
from playground.core.scenarios import REGISTRY
from playground.core.target import Target
from playground.core.tools.ab import ab_cap_rps
from playground.core.tools.output import LoadResult
from playground.core.verdicts import verdicts


@dataclass(frozen=True)
class Measured:
    """One repeat: the tool's result, its per-request timeline and the samples around it."""

    result: LoadResult
    timeline: Timeline | None
    series: dict[str, Series]  # the app's containers through the load, by service
    before: dict[str, Series]  # the same before any load
    loadgen_cpu: float | None  # the load generator's highest CPU sample
    # What Docker's port-forwarding proxy did to a load sent from the host (playground.bench.hostpath).
    host_path: tuple[str, ...] = ()

    @property
    def estimate(self) -> float | None:
        """c / mean response time (ab) or wrk's own rate, before the steady-state rule."""
        return self.result.steady_rps

    @property
    def waves(self) -> float | None:
        if self.result.tool != "ab":
            # wrk runs for a fixed duration with no start-up phase: its rate is measured.
            return None
        return waves(time_taken_s=self.result.time_taken_s, mean_ms=self.result.mean_latency_ms)

    @property
    def steady(self) -> float | None:
        """The steady figure shown: only with few error answers and, for ab, where the run
        reached a steady state (:func:`playground.bench.diagnosis.steady_holds`)."""
        return (
            self.estimate if diagnosis.steady_holds(result=self.result, waves=self.waves) else None
        )

    @property
    def headline(self) -> float | None:
        """The figure the spread over repeats is judged on: steady, else the measured rate."""
        return self.steady if self.steady is not None else self.result.rps


@dataclass(frozen=True)
class Failed:
    """A repeat the load tool gave no report for: why, in one line."""

    error: str


def new_entry(target: Target, *, tool: str, **figures: Any) -> Entry:
    """Every entry is made here, its verdicts decided once (`verdicts.verdicts`)."""
    delay = target.delay
    tutorial = _tutorial_load(target)
    entry = Entry(
        name=target.name,
        title=target.title,
        kind=target.kind,
        compose_file=target.compose_file,
        service=target.service,
        url=target.url(delay=delay),
        requests=target.requests,
        concurrency=target.concurrency,
        delay=delay,
        tool=tool,
        ideal_rps=loadmod.ideal_rps(concurrency=target.concurrency, delay=delay),
        ab_cap_rps=(
            ab_cap_rps(requests=target.requests, concurrency=target.concurrency, delay=delay)
            if tool == "ab"
            else None
        ),
        tutorial_rps=target.tutorial_rps if tutorial else None,
        tutorial_time_s=target.tutorial_time_s if tutorial else None,
        published=target.published,
        **figures,
    )
    return verdicts(entry)


def _tutorial_load(target: Target) -> bool:
    """The published figure only compares with a run at the tutorial's own load."""
    default = REGISTRY.get(target.name)
    return default is not None and (default.requests, default.concurrency, default.delay) == (
        target.requests,
        target.concurrency,
        target.delay,
    )


def measured_figures(
    target: Target,
    measured: Sequence[Measured],
    *,
    errors: Sequence[str],
    restarts: dict[str, int],
    fd_limits: dict[str, int | None],
) -> dict[str, Any]:
    """An entry's figures from the repeats that gave a report (at least one); ``errors`` are
    the others'. The tool's figures are the median repeat's, failures the worst repeat's."""
    mid = median_measurement(measured)
    r = mid.result
    during = combine(mid.series.values())
    loadgen_cpu = max((m.loadgen_cpu or 0 for m in measured), default=None)
    steadies = [m.steady for m in measured if m.steady is not None]
    steady = statistics.median(steadies) if steadies else None
    ideal = (
        loadmod.ideal_rps(concurrency=target.concurrency, delay=target.delay)
        if target.delay > 0
        else None
    )
    samples = _sample_figures(target, during=during, before=combine(mid.before.values()), r=r)
    findings = _findings(
        target,
        measured,
        mid=mid,
        during=during,
        loadgen_cpu=loadgen_cpu,
        cpu_ms=samples["cpu_ms_per_request"],
        fd_limits=fd_limits,
    )
    invalid = _invalid_reasons(measured, loadgen_cpu=loadgen_cpu, errors=errors, restarts=restarts)
    return {
        "rps": statistics.median(m.result.rps for m in measured),
        "time_taken_s": statistics.median(m.result.time_taken_s for m in measured),
        "steady_rps": steady,
        "waves": mid.waves,
        "efficiency": (steady / ideal) if steady is not None and ideal else None,
        "failed": max(m.result.failed for m in measured),
        "non_2xx": max(m.result.non_2xx for m in measured),
        "failures": r.failures,
        "latency_ms": r.latency_ms,
        "mean_latency_ms": r.mean_latency_ms,
        "latency_distribution_ms": mid.timeline.distribution() if mid.timeline else [],
        "connect_max_ms": r.connect_max_ms,
        **samples,
        "loadgen_cpu_peak_pct": loadgen_cpu,
        "loadgen_saturated": diagnosis.saturated(loadgen_cpu),
        "valid": not invalid,
        "invalid_reasons": invalid,
        "findings": findings,
        # The target's own notes first (e.g. why a demo runs on a legacy image).
        "notes": [*target.notes, *(f.message for f in findings)],
        **_repeat_figures(measured),
        "samples": during,
        "error": None,
    }


def _repeat_figures(measured: Sequence[Measured]) -> dict[str, Any]:
    """Each repeat's own figures, and how far apart they lie."""
    rps_values = [m.result.rps for m in measured]
    steadies = [m.steady for m in measured if m.steady is not None]
    return {
        "repeats": [
            Repeat(
                rps=m.result.rps,
                steady_rps=m.steady,
                time_taken_s=m.result.time_taken_s,
                failed=m.result.failed,
                non_2xx=m.result.non_2xx,
            )
            for m in measured
        ],
        "spread": Spread(
            rps=[min(rps_values), max(rps_values)],
            steady_rps=[min(steadies), max(steadies)] if steadies else None,
            relative=diagnosis.relative_spread(
                [m.headline for m in measured if m.headline is not None]
            ),
        ),
    }


def _invalid_reasons(
    measured: Sequence[Measured],
    *,
    loadgen_cpu: float | None,
    errors: Sequence[str],
    restarts: dict[str, int],
) -> list[str]:
    """Why an entry's figures are not valid (empty: they are)."""
    failed = max(m.result.failed for m in measured)
    non_2xx = max(m.result.non_2xx for m in measured)
    invalid = [f"{failed} failed requests"] if failed else []
    invalid += [f"{non_2xx} non-2xx responses"] if non_2xx else []
    if diagnosis.saturated(loadgen_cpu):
        invalid.append(f"load generator saturated (CPU {loadgen_cpu:.0f}% of a core)")
    invalid += errors
    restarted = {s: n for s, n in restarts.items() if n}
    invalid += [f"container restarted during the run: {restarted}"] if restarted else []
    return invalid


def _sample_figures(
    target: Target, *, during: list[Sample], before: list[Sample], r: LoadResult
) -> dict[str, Any]:
    """Threads, processes, memory and CPU, from the samples before and through the load."""
    cpu_s = cpu_seconds(during)
    served = r.complete or target.requests
    before_rss = _peak("rss_mb", before) if before else None
    return {
        "threads_before": _peak("threads", before)
        if before
        else (during[0].threads if during else None),
        "threads_peak": _peak("threads", during),
        "threads_after": during[-1].threads if during else None,
        "processes": _peak("processes", during),
        "rss_before_mb": before_rss,
        "rss_peak_mb": _peak("rss_mb", during),
        # What one more request in flight costs in memory: the growth under load over c.
        "rss_per_request_kb": _per_request_kb(
            before=before_rss, peak=_peak("rss_mb", during), concurrency=target.concurrency
        ),
        "cpu_peak_pct": _peak("cpu_pct", during),
        "cpu_seconds": cpu_s,
        "cpu_ms_per_request": 1000 * cpu_s / served if cpu_s is not None and served else None,
    }


def _findings(
    target: Target,
    measured: Sequence[Measured],
    *,
    mid: Measured,
    during: list[Sample],
    loadgen_cpu: float | None,
    cpu_ms: float | None,
    fd_limits: dict[str, int | None],
) -> list[Finding]:
    """What the figures mean (playground.bench.diagnosis), for the median repeat."""
    findings = diagnosis.diagnose(
        diagnosis.Evidence(
            result=mid.result,
            delay=target.delay,
            concurrency=target.concurrency,
            requests=target.requests,
            samples=during,
            cpu_ms_per_request=cpu_ms,
            steady_estimate=mid.estimate,
            waves=mid.waves,
            loadgen_cpu_peak_pct=loadgen_cpu,
            cores=os.cpu_count() or 1,
            open_file_limits=fd_limits,
            processes_by_service={
                s: int(series.peak("processes") or 1) for s, series in mid.series.items()
            },
            repeat_figures=[m.headline for m in measured if m.headline is not None],
        )
    )
    return findings + diagnosis.host_path(dict.fromkeys(c for m in measured for c in m.host_path))


def median_measurement(measured: Sequence[Measured]) -> Measured:
    """The median repeat by its headline figure supplies latency and sampling figures."""
    order = sorted(measured, key=lambda m: m.headline or 0)
    return order[len(order) // 2]


def _per_request_kb(*, before: float | None, peak: float | None, concurrency: int) -> float | None:
    if before is None or peak is None or concurrency <= 0:
        return None
    return max(peak - before, 0.0) * 1024 / concurrency


def _peak(attr: str, samples: Sequence[Sample]) -> float | None:
    """The highest value of one figure over samples (None without samples)."""
    values: list[float] = [getattr(s, attr) for s in samples]
    return max(values, default=None)


def cpu_seconds(rows: Sequence[Sample]) -> float | None:
    """CPU time the sampled processes used over a series (the integral of cpu_pct)."""
    if len(rows) < 2:
        return None
    return float(sum((b.t - a.t) * b.cpu_pct / 100 for a, b in pairwise(rows)))

"""A contenders run built from the model, for the report's tests (no Docker needed).

The figures at c=200 and c=5 are those of run 20261123-122358 (`playground run --contenders`,
docs/contenders.md); latency and memory before the load are filled in at the values such runs
show. :func:`scale_run` adds a sweep to c=10,000 shaped like the scale check in the same
document: the event loop without a cap keeps up, 200 threads hold 200 whatever c is, and a
mode that stopped scaling (the sweep's --stop-below) is skipped at the higher concurrencies.
"""

from __future__ import annotations

from playground.core.results import BenchSettings, Entry, Run, ScaleRunSettings, ScaleSettings
from playground.core.verdicts import upgrade

#: name, c, requests/s, efficiency, threads peak, processes, RSS peak MB, KB per request,
#: CPU ms per request (run 20261123-122358).
MEASURED = (
    ("uvicorn-wsgitoasgi", 5, 1.0, None, 2, 1, 41.2, 22.3, 6.00),
    ("flask-async-views", 200, 163.8, 0.94, 603, 2, 96.9, 143.0, 3.41),
    ("granian-wsgi", 200, 170.3, 0.96, 205, 2, 102.9, 175.0, 1.48),
    ("gthread-1x200", 200, 173.2, 0.97, 203, 2, 79.4, 92.5, 1.77),
    ("gthread-4x50", 200, 139.1, 0.82, 206, 5, 191.7, 97.0, 1.80),
    ("quart-hypercorn", 200, 93.6, 0.51, 2, 1, 69.1, 94.6, 0.84),
    ("quart-hypercorn-nocap", 200, 169.5, 0.94, 2, 1, 67.3, 86.0, 0.74),
    ("uvicorn-a2wsgi", 200, 167.7, 0.95, 201, 1, 61.6, 105.1, 2.26),
)


def contender(
    name: str,
    c: int,
    rps: float | None,
    eff: float | None,
    threads: int | None,
    processes: int | None,
    rss: float | None,
    kb: float | None,
    cpu_ms: float | None,
    *,
    delay: float = 1.0,
    kind: str = "contender",
    valid: bool = True,
    **kw,
) -> Entry:
    ideal = c / delay
    requests = 10 if c == 5 else 10 * c
    # Little's law: the mean response time is c / requests/s, at least the delay.
    p50 = None if rps is None else 1000 * max(delay, c / rps)
    return Entry(
        name=name,
        title=name,
        kind=kind,
        compose_file=f"contenders/{name}.yml",
        service=name,
        requests=requests,
        concurrency=c,
        delay=delay,
        tool="ab",
        ideal_rps=ideal,
        ab_cap_rps=requests / ((requests / c + 1) * delay),
        rps=rps,
        steady_rps=None if eff is None else eff * ideal,
        efficiency=eff,
        non_2xx=0,
        latency_ms={}
        if p50 is None
        else {"p50": round(p50), "p99": round(p50 * 1.05), "max": round(p50 * 1.1)},
        threads_before=2,
        threads_peak=threads,
        processes=processes,
        rss_before_mb=None if rss is None or kb is None else rss - kb * c / 1024,
        rss_peak_mb=rss,
        rss_per_request_kb=kb,
        cpu_ms_per_request=cpu_ms,
        cpu_seconds=None if cpu_ms is None else cpu_ms * requests / 1000,
        valid=valid,
        **{"failed": 0, **kw},
    )


def calibration() -> Entry:
    return Entry(
        name="calibration",
        kind="calibration",
        requests=2000,
        concurrency=200,
        delay=1.0,
        tool="ab",
        rps=178.2,
        steady_rps=196.4,
        ideal_rps=200.0,
        efficiency=0.982,
        valid=True,
    )


def contenders_run() -> Run:
    """`playground run --contenders`: every contender once, at its default load."""
    return upgrade(
        Run(
            run_id="20261123-122358",
            started_at="2026-11-23T12:23:58+0000",
            finished_at="2026-11-23T12:58:02+0000",
            command="playground run --contenders",
            settings=BenchSettings(requests=2000, concurrency=200, delay=1.0, tool="ab"),
            calibration=calibration(),
            scenarios=[contender(*m) for m in MEASURED],
        )
    )


def scale_run() -> Run:
    """`playground scale --contenders`: a sweep to 10,000 (scale delays: ideal 200/s)."""
    delays = {100: 0.5, 1000: 5.0, 3000: 15.0, 10000: 50.0}
    entries = []
    for c, delay in delays.items():
        entries.append(
            contender(
                "quart-hypercorn-nocap",
                c,
                190.0 * (0.95 if c < 10000 else 0.8),
                0.95 if c < 10000 else 0.85,
                2,
                1,
                60.0 + c * 0.08,
                80.0,
                0.8,
                delay=delay,
            )
        )
        if c > 1000:  # below the sweep's --stop-below 0.5 at c=1000: not run higher up
            entries += [
                Entry(name=name, kind="contender", concurrency=c, delay=delay, skipped=True)
                for name in ("gthread-1x200", "gthread-4x50")
            ]
            continue
        held = min(c, 200)  # 200 threads hold 200 requests whatever c is
        entries.append(
            contender(
                "gthread-1x200",
                c,
                held / delay * 0.97,
                held / c * 0.97,
                203,
                2,
                79.0,
                92.0,
                1.8,
                delay=delay,
            )
        )
        entries.append(
            contender(
                "gthread-4x50",
                c,
                held / delay * 0.9,
                held / c * 0.9,
                206,
                5,
                190.0,
                97.0,
                1.8,
                delay=delay,
            )
        )
    return upgrade(
        Run(
            run_id="20261123-150000",
            started_at="2026-11-23T15:00:00+0000",
            finished_at="2026-11-23T15:40:00+0000",
            command="playground scale --contenders",
            settings=ScaleRunSettings(
                sweep=list(delays),
                scale=ScaleSettings(delays={str(c): d for c, d in delays.items()}, rate=200.0),
            ),
            scenarios=entries,
        )
    )

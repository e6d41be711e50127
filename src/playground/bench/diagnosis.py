"""Every rule that reads a measurement and says what it means, with its threshold.

The runner calls :func:`diagnose` once per entry and stores the :class:`~playground.core.results.Finding`
values it returns (code, severity, message, the figures read); the report renders them and
never re-derives or parses them. A rule's threshold lives here and nowhere else; the ones
another package reads too (a retransmitted SYN, the steady state, the verdicts stored with an
entry) live one layer down, in :mod:`playground.core.verdicts`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from playground.core.load import ideal_rps
from playground.core.results import Finding, Sample
from playground.core.tools.ab import ab_cap_rps
from playground.core.tools.output import LoadResult
from playground.core.verdicts import (
    MIN_STEADY_WAVES,
    NOISY_SPREAD,
    SYN_GAP_MS,
    SYN_RETRANSMIT_TWICE_MS,
    queued,
    syn_retransmitted,
)

#: The slowest request is a stall when it took at least this long and this many medians.
STALL_MIN_MS = 1000.0
STALL_FACTOR = 5.0
#: ab's figure "at its ceiling": within this share of ab_cap_rps, while the cap is below ideal.
AB_AT_CAP = 0.9
AB_CAP_BELOW_IDEAL = 0.95
#: CPU-bound: the app's processes used this share of every core, or one process of one core.
CPU_BOUND_PCT = 90.0
#: ab and wrk's threads are single-threaded event loops: at this CPU they are the limit.
SATURATED_CPU_PCT = 95.0
#: c / mean response time (and wrk's rate) counts every answer as served, and error answers are
#: quick: where more than this share of the requests failed or answered non-2xx, it is no rate
#: of served requests and no steady figure is shown. Seen: Quart at c=10,000 with 39,040 non-2xx
#: answers read 1.3 times its ideal.
MAX_ERROR_SHARE = 0.01
#: Rounds of c requests a scale load runs so that it lasts enough response times (ab adds one
#: for its lone first request).
MIN_STEADY_ROUNDS = 4
#: Lockstep waves: a shortfall of at least 5%, a median wait beyond the delay of more than 2%
#: of it, and at most 1.5 x the wave's CPU (beyond that the wave cannot account for the wait).
WAVE_SHORTFALL = 0.95
WAVE_MIN_EXTRA = 0.02
WAVE_MAX_FACTOR = 1.5
#: Open files: a process holds two sockets per request in flight; failures with that need
#: within this share of the limit are descriptors running out (the server's processes, and
#: docker-proxy on the host path: :mod:`playground.bench.hostpath`).
FD_NEAR_LIMIT = 0.9


def _fmt(value: float, digits: int = 2) -> str:
    """A figure as the tools print it, without trailing zeros: 40.34, 50, 0.2, 1014."""
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass(frozen=True)
class Evidence:
    """What one entry's diagnosis reads: the median repeat's load result and its samples."""

    result: LoadResult
    delay: float
    concurrency: int
    requests: int
    samples: Sequence[Sample] = ()
    cpu_ms_per_request: float | None = None
    steady_estimate: float | None = None  # c / mean response time, before the waves rule
    waves: float | None = None
    loadgen_cpu_peak_pct: float | None = None
    cores: int = 1
    open_file_limits: Mapping[str, int | None] = field(default_factory=dict)
    processes_by_service: Mapping[str, int] = field(default_factory=dict)
    repeat_figures: Sequence[float] = ()  # the headline figure of each repeat


def diagnose(evidence: Evidence) -> list[Finding]:
    """Every finding for one entry, most serious first within each group."""
    e = evidence
    steady = e.steady_estimate if steady_holds(result=e.result, waves=e.waves) else None
    findings = [
        *open_files(e),
        *load_findings(result=e.result, delay=e.delay, concurrency=e.concurrency, steady=steady),
    ]
    findings += steady_state(waves=e.waves, estimate=e.steady_estimate, measured=e.result.rps)
    findings += errors_in_steady(e.result, estimate=e.steady_estimate)
    ideal = ideal_rps(concurrency=e.concurrency, delay=e.delay) if e.delay > 0 else None
    findings += lockstep_waves(
        result=e.result,
        delay=e.delay,
        concurrency=e.concurrency,
        cpu_ms=e.cpu_ms_per_request,
        samples=e.samples,
        steady=steady,
        ideal=ideal,
    )
    findings += cpu_bound(samples=e.samples, cores=e.cores)
    findings += saturated_load_generator(e.loadgen_cpu_peak_pct)
    findings += noisy(e.repeat_figures)
    return findings


# --- the load tool's own figures ---------------------------------------------------------------
def load_findings(
    *, result: LoadResult, delay: float, concurrency: int, steady: float | bool | None = True
) -> list[Finding]:
    """What the load tool's report says: nothing completed, failures, SYN retransmits, queueing,
    stalls, ab at its own ceiling. ``steady``: the steady figure to quote (True: the result's
    own; None: the run had none)."""
    steady = result.steady_rps if steady is True else steady
    return [
        *_nothing_counted(result),
        *slow_connects(result, concurrency=concurrency),
        *_failures(result),
        *_waits(result, delay=delay),
        *_ab_at_its_cap(result, delay=delay, concurrency=concurrency, steady=steady),
    ]


def _nothing_counted(result: LoadResult) -> list[Finding]:
    """No request completed, or ab counted failures as complete requests."""
    out: list[Finding] = []
    if result.complete == 0:
        out.append(
            Finding(
                "nothing-completed",
                "error",
                f"no request completed in {_fmt(result.time_taken_s)} s: the figures "
                "below describe nothing",
                {"time_taken_s": result.time_taken_s},
            )
        )
    elif result.tool == "ab" and result.failed >= result.complete:
        out.append(
            Finding(
                "failures-counted-complete",
                "error",
                f"{result.failed} failure events for {result.complete} 'complete' requests: with -r, "
                f"ab counts requests that got no answer as complete, so its {_fmt(result.rps)} "
                "requests/s is meaningless",
                {"failed": result.failed, "complete": result.complete, "rps": result.rps},
            )
        )
    return out


def _failures(result: LoadResult) -> list[Finding]:
    """Failed requests (with the connections ab never sent a request on) and error answers."""
    out: list[Finding] = []
    if result.failed > 0:
        kinds = ", ".join(f"{kind} {count}" for kind, count in result.failures.items())
        out.append(
            Finding(
                "failed-requests",
                "error",
                f"{result.failed} failed requests ({kinds})",
                {"failed": result.failed, **result.failures},
            )
        )
    out += ab_unwritten_connections(result)
    if result.non_2xx > 0:
        label = "non-2xx" if result.tool == "ab" else "non-2xx/3xx"
        out.append(
            Finding(
                "non-2xx",
                "error",
                f"{result.non_2xx} {label} responses out of {result.complete}",
                {"non_2xx": result.non_2xx, "complete": result.complete},
            )
        )
    return out


def _waits(result: LoadResult, *, delay: float) -> list[Finding]:
    """Requests that queued before being served, and a few that stalled far longer."""
    out: list[Finding] = []
    p50, worst = result.latency_ms.get("p50"), result.latency_ms.get("max")
    if queued(p50_ms=p50, delay=delay):
        assert p50 is not None
        out.append(
            Finding(
                "queued",
                "info",
                f"median latency {_fmt(p50 / 1000, 3)} s for a {_fmt(delay, 3)} s upstream: requests "
                "queued (serialised or over capacity)",
                {"p50_ms": p50, "delay_s": delay},
            )
        )
    if (
        p50 is not None
        and worst is not None
        and worst >= STALL_MIN_MS
        and worst >= STALL_FACTOR * p50
    ):
        out.append(
            Finding(
                "stalled-requests",
                "warning",
                f"slowest request {_fmt(worst)} ms against a median of {_fmt(p50)} ms: a few requests "
                "stalled far longer than the rest",
                {"max_ms": worst, "p50_ms": p50},
            )
        )
    return out


def _ab_at_its_cap(
    result: LoadResult, *, delay: float, concurrency: int, steady: float | None
) -> list[Finding]:
    """ab's figure at its own ceiling (its lone first request), below the server's ideal."""
    out: list[Finding] = []
    if result.tool == "ab" and delay > 0 and result.complete >= concurrency > 0:
        cap = ab_cap_rps(requests=result.complete, concurrency=concurrency, delay=delay)
        ideal = ideal_rps(concurrency=concurrency, delay=delay)
        if (
            cap is not None
            and ideal is not None
            and result.rps >= AB_AT_CAP * cap
            and cap < AB_CAP_BELOW_IDEAL * ideal
        ):
            quoted = f"; steady rate {_fmt(steady, 1)}/s" if steady else ""
            out.append(
                Finding(
                    "ab-at-its-cap",
                    "info",
                    f"ab's {_fmt(result.rps)} requests/s is at its own ceiling of {_fmt(cap, 1)}/s for "
                    f"n={result.complete}, c={concurrency}: it sends the first request alone, so the "
                    f"run lasts at least (n/c + 1) x {_fmt(delay, 3)} s (ideal {_fmt(ideal, 1)}/s"
                    f"{quoted})",
                    {"rps": result.rps, "ab_cap_rps": cap, "ideal_rps": ideal},
                )
            )
    return out


def slow_connects(result: LoadResult, *, concurrency: int) -> list[Finding]:
    """A connect of a second or more: a SYN retransmitted (a listen queue overflowed), unless
    the per-request file shows the slow connects spread evenly, with no retransmit's gap."""
    connect = result.connect_max_ms
    if connect is None or not syn_retransmitted(connect):
        return []
    gap = result.connect_gap_ms
    if gap is not None and gap < SYN_GAP_MS:
        return [
            Finding(
                "slow-connects",
                "warning",
                f"max connect {_fmt(connect)} ms, but the connect times climb to it in steps of at "
                f"most {_fmt(gap)} ms, with no gap of the whole second a retransmitted SYN waits: "
                f"{concurrency} connections were being set up at once, and the per-request file "
                "cannot tell whether a listen queue overflowed too (the kernel's counters can: "
                "nstat's TcpExtListenOverflows in the app's network namespace, TcpExtTCPSynRetrans "
                "in the load generator's)",
                {"connect_max_ms": connect, "connect_gap_ms": gap, "concurrency": concurrency},
            )
        ]
    if connect >= SYN_RETRANSMIT_TWICE_MS:
        return [
            Finding(
                "syn-retransmit",
                "warning",
                f"max connect {_fmt(connect)} ms: a SYN was retransmitted at least twice (~3 s: a "
                "listen queue stayed full; the client waited 1 s + 2 s)",
                {"connect_max_ms": connect, "retransmits": 2, "connect_gap_ms": gap},
            )
        ]
    return [
        Finding(
            "syn-retransmit",
            "warning",
            f"max connect {_fmt(connect)} ms: at least one SYN was retransmitted (a listen "
            "queue overflowed; the client waited ~1 s)",
            {"connect_max_ms": connect, "retransmits": 1, "connect_gap_ms": gap},
        )
    ]


def ab_unwritten_connections(result: LoadResult) -> list[Finding]:
    """Length failures that are connections ab opened and never sent a request on.

    ab (2.3, httpd 2.4.71) opens a new connection while fewer requests have been *written* than
    asked for, so with -n a multiple of -c it opens one more connection than it has requests
    for and leaves it idle; the server closes it after its wait for a request and ab counts
    that as a finished request of 0 bytes, a Length failure, then stops one real answer short
    (load.ab_requests has the source lines). Such a record keeps the previous request's
    wait, longer than its own total time (load.ab_unwritten): the server did not fail them.
    """
    unwritten = result.unwritten or 0
    length = result.failures.get("length", 0)
    if result.tool != "ab" or not unwritten or not length:
        return []
    shown = min(unwritten, length)
    everything = shown == result.failed
    return [
        Finding(
            "ab-unwritten-connection",
            "warning",
            f"{shown} of the {length} Length failures {'is a connection' if shown == 1 else 'are connections'} "
            "ab opened but never sent a request on: it opens a new connection while fewer requests "
            "have been written than -n, so with -n a multiple of -c one connection too many sits "
            "idle until the server stops waiting for a request and closes it, and ab counts that "
            "as a request of 0 bytes and stops one answer short"
            + (
                " -- every failure of this run is one of these, none is the server's"
                if everything
                else ""
            )
            + "; -n = rounds x c + 1 (ab's lone first request, then full rounds) "
            "leaves none over while the rounds finish together, and a server that waits "
            "longer for a first request than the run's tail hides it",
            {"unwritten": shown, "length": length, "failed": result.failed},
        )
    ]


# --- throughput ------------------------------------------------------------------------------
def steady_reached(waves: float | None) -> bool:
    return waves is not None and waves >= MIN_STEADY_WAVES


def error_count(result: LoadResult) -> int:
    """Answers that were errors, at least: the larger of the tool's two counts (with ab a
    non-2xx answer of another length is also a Length failure)."""
    return max(result.failed, result.non_2xx)


def error_share(result: LoadResult) -> float | None:
    """The share of answers that were errors (:func:`error_count`), at most all of them."""
    if result.complete <= 0:
        return None
    return min(error_count(result) / result.complete, 1.0)


def steady_holds(*, result: LoadResult, waves: float | None) -> bool:
    """Whether the run's steady estimate may be shown: few enough error answers, and for ab a
    run long enough to settle (wrk runs for a fixed time with no start-up phase)."""
    share = error_share(result)
    if share is None or share > MAX_ERROR_SHARE:
        return False
    return result.tool != "ab" or steady_reached(waves)


def errors_in_steady(result: LoadResult, *, estimate: float | None) -> list[Finding]:
    """Why an entry with many error answers shows no steady figure."""
    share = error_share(result)
    if estimate is None or share is None or share <= MAX_ERROR_SHARE:
        return []
    bad = error_count(result)
    return [
        Finding(
            "errors-in-steady",
            "info",
            f"no steady figure: {bad} of {result.complete} requests failed or answered non-2xx "
            f"({share:.1%}, above {MAX_ERROR_SHARE:.0%}); c / mean response time "
            f"({_fmt(estimate, 1)}/s) would count those quick error answers as served; read "
            f"{_fmt(result.rps)} requests/s measured, errors included",
            {
                "errors": bad,
                "complete": result.complete,
                "share": share,
                "c_over_mean_rps": estimate,
                "rps": result.rps,
                "max_share": MAX_ERROR_SHARE,
            },
        )
    ]


def steady_state(
    *, waves: float | None, estimate: float | None, measured: float | None
) -> list[Finding]:
    """Why an entry shows no steady figure: the run was too short to reach a steady state."""
    if estimate is None or waves is None or steady_reached(waves):
        return []
    said = f"{_fmt(measured)} requests/s measured" if measured is not None else "the measured rate"
    return [
        Finding(
            "no-steady-state",
            "info",
            f"no steady figure: the run lasted only {_fmt(waves, 1)} response times (fewer than "
            f"{_fmt(MIN_STEADY_WAVES)}), so the queue never settled and c / mean response time "
            f"({_fmt(estimate, 1)}/s) is not a rate this server sustained; read {said}",
            {
                "waves": waves,
                "c_over_mean_rps": estimate,
                "rps": measured,
                "min_waves": MIN_STEADY_WAVES,
            },
        )
    ]


def lockstep_waves(
    *,
    result: LoadResult,
    delay: float,
    concurrency: int,
    cpu_ms: float | None,
    samples: Sequence[Sample],
    steady: float | None,
    ideal: float | None,
) -> list[Finding]:
    """A shortfall that 0.5-s CPU averages hide.

    ab keeps every client in lockstep: with a fixed upstream delay, c requests finish together
    and c new ones arrive together, once per delay. A server whose request path is Python in
    one process handles that wave one request at a time, so the last of the wave waits about
    c x (CPU per request) before its upstream call even starts, while the CPU samples,
    averaged over 0.5 s, show a half-idle process.
    """
    if cpu_ms is None or not steady or not ideal or steady >= WAVE_SHORTFALL * ideal or not samples:
        return []
    procs = max(row.processes for row in samples)
    extra_ms = (result.latency_ms.get("p50") or 0) - 1000 * delay
    wave_ms = concurrency * cpu_ms
    # Only where the wave's CPU can account for the wait: a serialised server queues for
    # seconds behind a few milliseconds of CPU, and "queued" says so already.
    if extra_ms <= WAVE_MIN_EXTRA * 1000 * delay or extra_ms > WAVE_MAX_FACTOR * wave_ms:
        return []
    return [
        Finding(
            "lockstep-waves",
            "info",
            f"CPU per request {cpu_ms:.2f} ms: a wave of {concurrency} requests costs "
            f"{wave_ms:.0f} ms of CPU across {procs:g} process(es), and the median request waited "
            f"{extra_ms:.0f} ms beyond the {delay:g} s delay. ab's clients move in lockstep, so each "
            "wave queues behind the request path's CPU work; the 0.5-s CPU samples average those "
            "bursts out",
            {
                "cpu_ms_per_request": cpu_ms,
                "wave_cpu_ms": wave_ms,
                "extra_wait_ms": extra_ms,
                "processes": procs,
            },
        )
    ]


# --- the machine --------------------------------------------------------------------------------
def cpu_bound(*, samples: Sequence[Sample], cores: int) -> list[Finding]:
    if not samples:
        return []
    peak = max(row.cpu_pct for row in samples)
    single = max(row.processes for row in samples) <= 1
    figures = {"cpu_peak_pct": peak, "cores": cores}
    if peak >= CPU_BOUND_PCT * cores:
        return [
            Finding(
                "cpu-bound",
                "warning",
                f"the app used {peak:.0f}% CPU at peak ({cores} cores = {100 * cores}%): CPU-bound",
                figures,
            )
        ]
    if peak >= CPU_BOUND_PCT and single:
        return [
            Finding(
                "cpu-bound",
                "warning",
                f"the app's one process used {peak:.0f}% of a core at peak: CPU-bound in "
                "a single process",
                figures,
            )
        ]
    if peak >= CPU_BOUND_PCT:
        return [
            Finding(
                "cpu-busy",
                "info",
                f"app CPU peaked at {peak:.0f}% (100% = one core): requests queue behind "
                "computation as well as behind the upstream delay",
                figures,
            )
        ]
    return []


def saturated(loadgen_cpu_peak_pct: float | None) -> bool:
    return loadgen_cpu_peak_pct is not None and loadgen_cpu_peak_pct >= SATURATED_CPU_PCT


def saturated_load_generator(loadgen_cpu_peak_pct: float | None) -> list[Finding]:
    if not saturated(loadgen_cpu_peak_pct):
        return []
    return [
        Finding(
            "loadgen-saturated",
            "error",
            f"load generator saturated (its CPU peaked at {loadgen_cpu_peak_pct:.0f}% of "
            "a core): these figures measure the load tool's limit, not the server's",
            {"loadgen_cpu_peak_pct": loadgen_cpu_peak_pct},
        )
    ]


def near_fd_limit(needed: int, limit: int) -> bool:
    """Whether a process needing this many descriptors is within :data:`FD_NEAR_LIMIT` of its
    open-file limit."""
    return needed >= FD_NEAR_LIMIT * limit


def open_files(e: Evidence) -> list[Finding]:
    """Failures at high concurrency on a host whose open-file limit a process cannot fit in."""
    out = []
    for service, limit in e.open_file_limits.items():
        procs = e.processes_by_service.get(service, 1) or 1
        workers = max(procs - 1, 1) if procs > 1 else 1  # a master process holds no clients
        needed = 2 * e.concurrency // workers
        if e.result.failed and limit and near_fd_limit(needed, limit):
            out.append(
                Finding(
                    "open-files",
                    "error",
                    f"{service}: each in-flight request holds two sockets (client and upstream), so "
                    f"~{needed} per process at c={e.concurrency}, against an open-file limit of "
                    f"{limit} (inherited from the Docker daemon): the failures are descriptors "
                    "running out, not the server model",
                    {"service": service, "needed": needed, "limit": limit},
                )
            )
    return out


def host_path(causes: Iterable[str]) -> list[Finding]:
    """What Docker's port-forwarding proxy did to a load sent from the host (the causes are
    named by playground.bench.hostpath); with them the figures measure the proxy, not the server."""
    return [Finding("host-path", "error", cause, {}) for cause in causes]


# --- repeats ---------------------------------------------------------------------------------
def relative_spread(values: Sequence[float | None]) -> float | None:
    """(max - min) / median of the repeats; None with fewer than two or a zero median."""
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return None
    median = statistics.median(known)
    return (max(known) - min(known)) / median if median else None


def noisy(values: Sequence[float]) -> list[Finding]:
    spread = relative_spread(values)
    if spread is None or spread <= NOISY_SPREAD:
        return []
    return [
        Finding(
            "noisy",
            "warning",
            f"noisy: the {len(values)} repeats lie {spread:.1%} apart (more than "
            f"{NOISY_SPREAD:.0%}): read this entry's figures as approximate",
            {"spread": spread, "repeats": len(values), "min": min(values), "max": max(values)},
        )
    ]

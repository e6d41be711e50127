"""From one target's attempts and server samples to per-second series and the summary figures.

Time is the generator's: second 0 is its start. Every attempt is counted once when it is sent
(an arrival or a refresh) and once when it ends (goodput, or a timeout or error), so both
sides of the series add up to the number of attempts; `check_adds_up` says whether they do.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from playground.core.jsonmodel import ModelError
from playground.incident.captured import (
    AccessRecord,
    ServerSample,
    UpstreamCall,
    calls_for_nobody,
    worker_split,
)
from playground.incident.split import split_before
from playground.incident.targetresults import GeneratorCheck, Incident, StorySecond, StorySummary

OK = "ok"
RECOVERY_WINDOW_S = 5  # goodput and answers due are compared over 5 s windows
RECOVERED_SHARE = 0.95
WARMUP_S = 5.0  # seconds at the start not counted as "before the incident"


@dataclass(frozen=True)
class Attempt:
    visit: int
    attempt: int
    intended: float
    sent: float
    end: float
    outcome: str
    status: int

    @property
    def latency(self) -> float:
        return self.end - self.intended

    @property
    def kind(self) -> str:
        """How it ended, in a word: ok, timeout, ..., or `http 503` for a status."""
        return f"http {self.status}" if self.outcome == "status" else self.outcome


@dataclass(frozen=True)
class GeneratorOutput:
    """What the open-loop generator wrote (loadgen/openloop.py's JSON), typed."""

    attempts: list[Attempt]
    check: GeneratorCheck
    loop: str | None
    t0_monotonic: float  # the run's second 0 on the machine's monotonic clock
    t0_wall: float  # ... and on the wall clock
    events: list[dict[str, Any]]  # the control requests, as the generator recorded them


#: The generator's columns an attempt is read from, and their types.
ATTEMPT_COLUMNS: dict[str, Callable[[Any], Any]] = {
    "visit": int,
    "attempt": int,
    "intended": float,
    "sent": float,
    "end": float,
    "outcome": str,
    "status": int,
}
LAGS = ("send_lag_p50_s", "send_lag_p99_s", "send_lag_max_s")


def _lag(value: Any) -> float | None:
    """A send-lag figure; the generator writes NaN where it had no sends."""
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def generator_output(result: dict[str, Any]) -> GeneratorOutput:
    """The generator's JSON as typed values; a file that is not one is a clear error."""
    try:
        idx = {c: i for i, c in enumerate(result["columns"])}
        attempts = [
            Attempt(**{c: read(r[idx[c]]) for c, read in ATTEMPT_COLUMNS.items()})
            for r in result["attempts"]
        ]
        check = result["check"]
        return GeneratorOutput(
            attempts=attempts,
            check=GeneratorCheck(
                valid=bool(check.get("valid")),
                reasons=[str(r) for r in check.get("reasons") or []],
                **{lag: _lag(check.get(lag)) for lag in LAGS},
            ),
            loop=result.get("loop"),
            t0_monotonic=float(result.get("t0_monotonic") or 0.0),
            t0_wall=float(result.get("t0_wall") or 0.0),
            events=list(result.get("events") or []),
        )
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ModelError(f"the generator's output is not readable: {exc!r}") from None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Visit:
    """One user: from the first intended send to the first success, refreshes included."""

    visit: int
    start: float
    attempts: int
    succeeded: bool
    latency: float  # to the first success; for a user who never got one, to the last end
    # (a lower bound: what they had waited when they gave up for good)


def visits_from(attempts: Sequence[Attempt]) -> list[Visit]:
    by_visit: dict[int, list[Attempt]] = {}
    for a in attempts:
        by_visit.setdefault(a.visit, []).append(a)
    visits = []
    for number, tries in by_visit.items():
        tries.sort(key=lambda a: a.attempt)
        start = tries[0].intended
        success = next((a for a in tries if a.outcome == OK), None)
        end = success.end if success else max(a.end for a in tries)
        visits.append(
            Visit(
                visit=number,
                start=start,
                attempts=len(tries),
                succeeded=success is not None,
                latency=end - start,
            )
        )
    return sorted(visits, key=lambda v: v.start)


def per_second(
    attempts: Sequence[Attempt],
    *,
    seconds: int,
    server: Sequence[ServerSample] = (),
    t0_monotonic: float | None = None,
    access: Sequence[tuple[float, int]] = (),
) -> list[StorySecond]:
    """One row per second of the run: what was sent, what ended, what was in flight, the
    latency users saw (by the second they arrived in), the servers' last sample in it, and
    nginx's 499s and 5xx by the second they ended (`access`: run second, status)."""
    n = max(seconds, 1 + int(max((a.end for a in attempts), default=0)))
    counts: dict[str, list[Any]] = {
        key: [0] * n
        for key in ("arrivals", "refreshes", "goodput", "timeouts", "errors", "in_flight")
    }
    latencies: list[list[float]] = [[] for _ in range(n)]
    for a in attempts:
        sent_s = min(n - 1, max(0, int(a.intended)))
        counts["arrivals" if a.attempt == 1 else "refreshes"][sent_s] += 1
        end_s = min(n - 1, max(0, int(a.end)))
        key = "goodput" if a.outcome == OK else "timeouts" if a.outcome == "timeout" else "errors"
        counts[key][end_s] += 1
        # In flight at the end of each second it spans (boundaries b with sent <= b < end).
        b = max(1, math.ceil(a.sent))
        while b < a.end and b <= n:
            counts["in_flight"][b - 1] += 1
            b += 1
    for v in visits_from(attempts):
        latencies[min(n - 1, max(0, int(v.start)))].append(v.latency)
    samples: list[dict[str, Any]] = [{} for _ in range(n)]
    if t0_monotonic is not None:
        for sample in server:
            s = int(sample.monotonic - t0_monotonic)
            if 0 <= s < n:
                samples[s].update(sample.figures)
    # nginx's 499s and 5xx, where its log was read (None in every row where it was not)
    nginx: dict[str, list[Any]] = {"nginx_499": [0] * n, "nginx_5xx": [0] * n} if access else {}
    for t, status in access:
        if 0 <= (s := int(t)) < n:
            nginx["nginx_499"][s] += status == 499
            nginx["nginx_5xx"][s] += 500 <= status < 600
    return [
        StorySecond(
            t=s,
            **{key: values[s] for key, values in counts.items()},
            latency_p50=percentile(latencies[s], 50),
            latency_p99=percentile(latencies[s], 99),
            **{key: values[s] for key, values in nginx.items()},
            **samples[s],
        )
        for s in range(n)
    ]


def check_adds_up(attempts: Sequence[Attempt], rows: Sequence[StorySecond]) -> list[str]:
    """Every attempt counted exactly once on each side; the problems found, if any."""
    problems = []
    sent = sum(r.arrivals + r.refreshes for r in rows)
    ended = sum(r.goodput + r.timeouts + r.errors for r in rows)
    if sent != len(attempts):
        problems.append(f"{sent} attempts sent per second, {len(attempts)} in the log")
    if ended != len(attempts):
        problems.append(f"{ended} attempts ended per second, {len(attempts)} in the log")
    visits = len({a.visit for a in attempts})
    if (arrivals := sum(r.arrivals for r in rows)) != visits:
        problems.append(f"{arrivals} arrivals, {visits} visits")
    return problems


def expected_goodput(attempts: Sequence[Attempt], *, lag: float, seconds: int) -> list[int]:
    """Per second, the visits whose answer was due then: first intended send + `lag` (the
    normal latency). Comparing goodput with this, not with the arrivals of the same second,
    keeps a burst of arrivals at the end of a window from looking like a shortfall."""
    due = [0] * seconds
    for a in attempts:
        if a.attempt == 1:
            s = int(a.intended + lag)
            if 0 <= s < seconds:
                due[s] += 1
    return due


def recovery_time(
    goodput: Sequence[int],
    due: Sequence[int],
    *,
    incident_end: float,
    until: float,
    failed: Sequence[int] | None = None,
) -> float | None:
    """Seconds after the third party is fast again until goodput is back to 95% of the
    answers due (5 s windows), with at most 5% of them failing (timeouts, errors: a backlog
    served late is not a recovery while users still give up), and stays so until `until`;
    None: not within the run. Whole seconds from the first one after the incident."""
    failed = failed if failed is not None else [0] * len(goodput)
    last = int(until) - RECOVERY_WINDOW_S
    start = math.ceil(incident_end)

    def ok(w: int) -> bool:
        window = slice(w, w + RECOVERY_WINDOW_S)
        expected = sum(due[window])
        return (
            sum(goodput[window]) >= RECOVERED_SHARE * expected
            and sum(failed[window]) <= (1 - RECOVERED_SHARE) * expected
        )

    # Recovered from the window after the last one that was not.
    failing = [w for w in range(start, last + 1) if not ok(w)]
    recovered = failing[-1] + 1 if failing else start
    return float(recovered - incident_end) if recovered <= last else None


def summarise(
    *,
    attempts: Sequence[Attempt],
    rows: Sequence[StorySecond],
    incident: Incident,
    arrivals_end: float,
    timeout: float,
    access: Sequence[AccessRecord] = (),
    calls: Sequence[UpstreamCall] = (),
) -> StorySummary:
    """The summary figures of one target through the incident."""
    incident_start, incident_end = incident.start, incident.start + incident.seconds
    visits = visits_from(attempts)
    warm, before, during, normal = _phases(visits, incident)

    def mean(name: str, lo: float, hi: float) -> float | None:
        picked = [getattr(r, name) for r in rows if lo <= r.t < hi]
        return sum(picked) / len(picked) if picked else None

    arrivals_during = mean("arrivals", incident_start, incident_end)
    failed = [a for a in attempts if a.outcome not in (OK, "timeout")]
    waited = [v.latency for v in during]
    return StorySummary(
        visits=len(visits),
        attempts=len(attempts),
        amplification=len(attempts) / len(visits) if visits else None,
        arrival_rate=mean("arrivals", warm, arrivals_end),
        goodput_before=mean("goodput", warm, incident_start),
        goodput_during=mean("goodput", incident_start, incident_end),
        arrivals_during=arrivals_during,
        attempts_during=(arrivals_during or 0)
        + (mean("refreshes", incident_start, incident_end) or 0),
        goodput_after=mean("goodput", incident_end, arrivals_end),
        recovery_s=recovery_time(
            [r.goodput for r in rows],
            expected_goodput(attempts, lag=normal, seconds=len(rows)),
            incident_end=incident_end,
            until=arrivals_end,
            failed=[r.timeouts + r.errors for r in rows],
        ),
        normal_latency_s=normal,
        visits_served_before=_share(before),
        visits_served_during=_share(during),
        visits_never_served=sum(not v.succeeded for v in visits),
        user_latency_p50_during=percentile(waited, 50),
        user_latency_p99_during=percentile(waited, 99),
        timeouts=sum(a.outcome == "timeout" for a in attempts),
        errors=len(failed),
        error_latency_p50_s=percentile([a.latency for a in failed], 50),
        outcomes=dict(Counter(a.kind for a in attempts)),
        timeout_s=timeout,
        **_nginx_side(access, calls),
        **_server_side(rows, lo=incident_start, hi=incident_end),
    )


def _nginx_side(access: Sequence[AccessRecord], calls: Sequence[UpstreamCall]) -> dict[str, Any]:
    """What nginx and the third party saw: every request, the 499s, the calls for nobody."""
    matched, late = calls_for_nobody(calls, access)
    return {
        # Requests nginx passed on whose client had gone before the answer (499): the app
        # still worked on each (a thread or greenlet waited on the third party for it).
        "wasted_499": sum(1 for r in access if r.status == 499),
        "nginx_requests": len(access),
        "upstream_calls": matched if calls else None,
        "calls_for_nobody": late if calls else None,
    }


def _phases(
    visits: Sequence[Visit], incident: Incident
) -> tuple[float, list[Visit], list[Visit], float]:
    """The warm-up's length, the visits before the incident and during it, and the normal
    latency (the median before it)."""
    start, end = incident.start, incident.start + incident.seconds
    # The first seconds fill the servers and are left out of "before": 5 s, or half of what
    # there is before the incident where that is shorter (a short test schedule), so "before"
    # is never empty (an empty one would make the normal latency the incident's).
    warm = min(WARMUP_S, start / 2)
    before = [v for v in visits if warm <= v.start < start]
    during = [v for v in visits if start <= v.start < end]
    return warm, before, during, percentile([v.latency for v in before], 50) or 0.0


def verdict_figures(
    attempts: Sequence[Attempt], *, incident: Incident, arrivals_end: float, seconds: int
) -> tuple[float | None, float | None]:
    """The two figures a verdict needs, the visits served during the incident and the time to
    recover, as :func:`summarise` gives them from the rows :func:`per_second` makes of
    `seconds`, without making the rows (the model's draws: thousands of runs)."""
    visits = visits_from(attempts)
    _, _, during, normal = _phases(visits, incident)
    n = max(seconds, 1 + int(max((a.end for a in attempts), default=0)))
    goodput, failed = [0] * n, [0] * n
    for a in attempts:
        (goodput if a.outcome == OK else failed)[min(n - 1, max(0, int(a.end)))] += 1
    recovery = recovery_time(
        goodput,
        expected_goodput(attempts, lag=normal, seconds=n),
        incident_end=incident.start + incident.seconds,
        until=arrivals_end,
        failed=failed,
    )
    return _share(during), recovery


def _share(visits: Sequence[Visit]) -> float | None:
    return sum(v.succeeded for v in visits) / len(visits) if visits else None


def _peak(rows: Sequence[StorySecond], name: str) -> float | None:
    values = [v for r in rows if (v := getattr(r, name)) is not None]
    return max(values) if values else None


def _server_side(rows: Sequence[StorySecond], *, lo: float, hi: float) -> dict[str, Any]:
    """What the servers showed through the run: each series' peak, the threads before, and
    how the connections spread over the workers during the incident [lo, hi)."""
    return {
        "peak_in_flight": _peak(rows, "in_flight"),
        "peak_listen_queue": _peak(rows, "listen_queue"),
        "peak_uwsgi_listen_queue": _peak(rows, "uwsgi_listen_queue"),
        "peak_busy_cores": _peak(rows, "busy_cores"),
        "worker_connections_during": worker_split(
            [r.worker_connections for r in rows], lo=lo, hi=hi
        ),
        "worker_connections_before": split_before(
            [r.worker_connections for r in rows], incident_start=lo
        ),
        "peak_upstream_in_flight": _peak(rows, "upstream_in_flight"),
        "peak_nginx_active": _peak(rows, "nginx_active"),
        "peak_threads": _peak(rows, "threads"),
        "threads_before": next((r.threads for r in rows if r.threads is not None), None),
        "peak_cpu_pct": _peak(rows, "cpu_pct"),
        "peak_rss_mb": _peak(rows, "rss_mb"),
    }

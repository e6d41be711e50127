"""From one mode's attempts and server samples to per-second series and the summary figures.

Time is the generator's: second 0 is its start. Every attempt is counted once when it is sent
(an arrival or a refresh) and once when it ends (goodput, or a timeout or error), so both
sides of the series add up to the number of attempts; `check_adds_up` says whether they do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

OK = "ok"
RECOVERY_WINDOW_S = 5  # goodput and answers due are compared over 5 s windows
RECOVERED_SHARE = 0.95


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


def attempts_from(result: dict) -> list[Attempt]:
    """The generator's rows (its JSON: `columns` and `attempts`) as typed attempts."""
    idx = {c: i for i, c in enumerate(result["columns"])}
    return [
        Attempt(
            visit=r[idx["visit"]],
            attempt=r[idx["attempt"]],
            intended=r[idx["intended"]],
            sent=r[idx["sent"]],
            end=r[idx["end"]],
            outcome=r[idx["outcome"]],
            status=r[idx["status"]],
        )
        for r in result["attempts"]
    ]


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
    server: Sequence[dict] = (),
    t0_monotonic: float | None = None,
) -> list[dict]:
    """One row per second of the run: what was sent, what ended, what was in flight, the
    latency users saw (by the second they arrived in) and the servers' last sample in it."""
    n = max(seconds, 1 + int(max((a.end for a in attempts), default=0)))
    rows = [
        {
            "t": s,
            "arrivals": 0,
            "refreshes": 0,
            "goodput": 0,
            "timeouts": 0,
            "errors": 0,
            "in_flight": 0,
        }
        for s in range(n)
    ]
    latencies: list[list[float]] = [[] for _ in range(n)]
    for a in attempts:
        sent_s = min(n - 1, max(0, int(a.intended)))
        rows[sent_s]["arrivals" if a.attempt == 1 else "refreshes"] += 1
        end_s = min(n - 1, max(0, int(a.end)))
        key = "goodput" if a.outcome == OK else "timeouts" if a.outcome == "timeout" else "errors"
        rows[end_s][key] += 1
        # In flight at the end of each second it spans (boundaries b with sent <= b < end).
        b = max(1, math.ceil(a.sent))
        while b < a.end and b <= n:
            rows[b - 1]["in_flight"] += 1
            b += 1
    for v in visits_from(attempts):
        latencies[min(n - 1, max(0, int(v.start)))].append(v.latency)
    for s, row in enumerate(rows):
        row["latency_p50"] = percentile(latencies[s], 50)
        row["latency_p99"] = percentile(latencies[s], 99)
    if server and t0_monotonic is not None:
        for sample in server:
            s = int(sample["monotonic"] - t0_monotonic)
            if 0 <= s < n:
                rows[s].update({k: v for k, v in sample.items() if k != "monotonic"})
    return rows


def check_adds_up(attempts: Sequence[Attempt], rows: Sequence[dict]) -> list[str]:
    """Every attempt counted exactly once on each side; the problems found, if any."""
    problems = []
    sent = sum(r["arrivals"] + r["refreshes"] for r in rows)
    ended = sum(r["goodput"] + r["timeouts"] + r["errors"] for r in rows)
    if sent != len(attempts):
        problems.append(f"{sent} attempts sent per second, {len(attempts)} in the log")
    if ended != len(attempts):
        problems.append(f"{ended} attempts ended per second, {len(attempts)} in the log")
    visits = len({a.visit for a in attempts})
    if sum(r["arrivals"] for r in rows) != visits:
        problems.append(f"{sum(r['arrivals'] for r in rows)} arrivals, {visits} visits")
    return problems


def _mean(rows: Sequence[dict], key: str, lo: float, hi: float) -> float | None:
    picked = [r[key] for r in rows if lo <= r["t"] < hi]
    return sum(picked) / len(picked) if picked else None


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

    for s in range(start, last + 1):
        if all(ok(w) for w in range(s, last + 1)):
            return float(s - incident_end)
    return None


def summarise(
    *,
    attempts: Sequence[Attempt],
    rows: Sequence[dict],
    incident_start: float,
    incident_s: float,
    arrivals_end: float,
    timeout: float,
    access: Sequence[tuple[float, int, float]] = (),
) -> dict:
    """The summary figures of one mode. `access`: nginx's (run second, status, request time)."""
    incident_end = incident_start + incident_s
    visits = visits_from(attempts)
    during = [v for v in visits if incident_start <= v.start < incident_end]
    before = [v for v in visits if 5 <= v.start < incident_start]
    normal = percentile([v.latency for v in before], 50) or 0.0

    def share(vs: Sequence[Visit]) -> float | None:
        return sum(v.succeeded for v in vs) / len(vs) if vs else None

    def peak(key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return max(values) if values else None

    outcomes: dict[str, int] = {}
    for a in attempts:
        key = a.outcome if a.outcome != "status" else f"http {a.status}"
        outcomes[key] = outcomes.get(key, 0) + 1
    return {
        "visits": len(visits),
        "attempts": len(attempts),
        "amplification": len(attempts) / len(visits) if visits else None,
        "arrival_rate": _mean(rows, "arrivals", 5, arrivals_end),
        "goodput_before": _mean(rows, "goodput", 5, incident_start),
        "goodput_during": _mean(rows, "goodput", incident_start, incident_end),
        "arrivals_during": _mean(rows, "arrivals", incident_start, incident_end),
        "attempts_during": (_mean(rows, "arrivals", incident_start, incident_end) or 0)
        + (_mean(rows, "refreshes", incident_start, incident_end) or 0),
        "goodput_after": _mean(rows, "goodput", incident_end, arrivals_end),
        "recovery_s": recovery_time(
            [r["goodput"] for r in rows],
            expected_goodput(attempts, lag=normal, seconds=len(rows)),
            incident_end=incident_end,
            until=arrivals_end,
            failed=[r["timeouts"] + r["errors"] for r in rows],
        ),
        "normal_latency_s": normal,
        "visits_served_before": share(before),
        "visits_served_during": share(during),
        "visits_never_served": sum(not v.succeeded for v in visits),
        "user_latency_p50_during": percentile([v.latency for v in during], 50),
        "user_latency_p99_during": percentile([v.latency for v in during], 99),
        "timeouts": sum(a.outcome == "timeout" for a in attempts),
        "errors": sum(a.outcome not in (OK, "timeout") for a in attempts),
        "outcomes": outcomes,
        # Requests nginx passed on whose client had gone before the answer (499): the app
        # still worked on each (a thread or greenlet waited on the third party for it).
        "wasted_499": sum(1 for _, status, _ in access if status == 499),
        "nginx_requests": len(access),
        "peak_in_flight": peak("in_flight"),
        "peak_listen_queue": peak("listen_queue"),
        "peak_uwsgi_listen_queue": peak("uwsgi_listen_queue"),
        "peak_busy_cores": peak("busy_cores"),
        "peak_upstream_in_flight": peak("upstream_in_flight"),
        "peak_nginx_active": peak("nginx_active"),
        "peak_threads": peak("threads"),
        "threads_before": next((r["threads"] for r in rows if r.get("threads") is not None), None),
        "peak_cpu_pct": peak("cpu_pct"),
        "timeout_s": timeout,
    }

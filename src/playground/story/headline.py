"""The story report's headline: every measured target's figures, one quantity per cell, in
tables by theme (what the users got; what they waited and what failed; inside the server; the
load generator's schedule), so each table fits a 1366-px laptop screen. One row of cells per
target, by column name; each table takes its own columns from it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from playground.core.notation import DASH, num, percent
from playground.incident.split import busiest_share, connections_before
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.incident.targetresults import StorySummary
from playground.report.document import Table
from playground.story.cells import label, once, recovery, took, verdict
from playground.story.findings import trusted

USERS = (
    "target",
    "verdict",
    "arrivals/s",
    "goodput/s before",
    "goodput/s during",
    "goodput/s after",
    "visits served during",
    "time to recover",
    "attempts/visit",
)
WAITS = (
    "target",
    "user p50 during (s)",
    "user p99 during (s)",
    "timeouts",
    "errors",
    "p50 time to an error",
    "499s",
    "calls for nobody",
    "third-party calls",
)
SPLIT = "connections per worker during (mean)"
BEFORE = "connections per worker before (mean; busiest's share)"
SERVER = (
    "target",
    "peak in flight",
    BEFORE,
    SPLIT,
    "peak listen queue",
    "threads before",
    "threads at peak",
    "peak memory (MB)",
    "Little's law: pool answers/s at the incident",
    "arrivals over it (/s)",
)
GENERATOR = ("target", "send lag p50 (ms)", "send lag p99 (ms)", "send lag max (ms)")
TABLES = (USERS, WAITS, SERVER, GENERATOR)
#: Every column once, in reading order.
COLUMNS = tuple(dict.fromkeys(c for table in TABLES for c in table))
#: Shown for a run whose generator did not keep its schedule: why it is not trusted (the send
#: lag), and the model's figures, which measured nothing.
UNTRUSTED_SHOWN = (*GENERATOR, "verdict", *SERVER[-2:])
WITHHELD = "withheld"


def _lag(t: StoryTarget) -> dict[str, str]:
    """The generator's send lag in ms: shown for every run, valid or not."""
    c = t.check
    values = (None,) * 3 if c is None else (c.send_lag_p50_s, c.send_lag_p99_s, c.send_lag_max_s)
    return {
        header: num(None if v is None else 1000 * v, 1)
        for header, v in zip(GENERATOR[1:], values, strict=True)
    }


def _predicted(t: StoryTarget) -> dict[str, str]:
    """Little's law's answer for a thread pool: what it serves, and by how much the arrivals
    exceed it ("within" where they do not)."""
    p = t.prediction
    if p is None:
        return dict.fromkeys(SERVER[-2:], DASH)
    over = f"{p.rate - p.capacity_per_s:.1f}" if p.over else "within"
    return dict(zip(SERVER[-2:], (f"{p.capacity_per_s:.1f}", over), strict=True))


def _split(t: StoryTarget, s: StorySummary) -> str:
    """A thread pool's split between its workers: each one's connections during the incident."""
    split = s.worker_connections_during
    if t.model != "threads" or not split:
        return DASH
    return " / ".join(num(v, 0) for v in split)


def _before(t: StoryTarget) -> str:
    """A thread pool's split before the incident, and its busiest worker's share of it."""
    split = connections_before(t)
    share = busiest_share(split)
    if t.model != "threads" or not split:
        return DASH
    shown = " / ".join(num(v, 0) for v in split)
    return shown if share is None else f"{shown} ({percent(share)})"


def _measured(t: StoryTarget, s: StorySummary, after_s: float) -> dict[str, str]:
    counted = s.upstream_calls is not None  # the third party's calls, where they were logged
    return {
        "arrivals/s": num(s.arrival_rate),
        "goodput/s before": num(s.goodput_before, 0),
        "goodput/s during": num(s.goodput_during, 0),
        "goodput/s after": num(s.goodput_after, 0),
        "visits served during": percent(s.visits_served_during),
        "time to recover": recovery(t, after_s),
        "attempts/visit": num(s.amplification, 2),
        "user p50 during (s)": num(s.user_latency_p50_during, 1),
        "user p99 during (s)": num(s.user_latency_p99_during, 1),
        "timeouts": num(s.timeouts),
        "errors": num(s.errors),
        "p50 time to an error": took(s.error_latency_p50_s) if s.errors else DASH,
        "499s": num(s.wasted_499),
        "calls for nobody": num(s.calls_for_nobody) if counted else DASH,
        "third-party calls": num(s.upstream_calls),
        "peak in flight": num(s.peak_in_flight, 0),
        BEFORE: _before(t),
        SPLIT: _split(t, s),
        "peak listen queue": num(s.peak_listen_queue, 0),
        "threads before": num(s.threads_before, 0),
        "threads at peak": num(s.peak_threads, 0),
        "peak memory (MB)": num(s.peak_rss_mb, 0),
    }


def cells(
    t: StoryTarget, after_s: float, name: str | None = None, *, measured_once: bool = False
) -> dict[str, str]:
    """One target's figures by column. An invalid run is never a headline: its figures stay in
    results.json and in its own section; only its verdict and why (the send lag) show.
    ``measured_once``: the run has no repeats, and its verdict says 1 of 1."""
    row = dict.fromkeys(COLUMNS, DASH)
    row["target"] = name or t.name
    s = t.summary
    if s is not None and not trusted(t):
        row |= dict.fromkeys(set(COLUMNS) - set(UNTRUSTED_SHOWN), WITHHELD)
    elif s is not None:
        row |= _measured(t, s, after_s) | _predicted(t)
    row["verdict"] = once(t) if measured_once else verdict(t)
    if s is not None:
        row |= _lag(t)
    return row


def tables(rows: Sequence[dict[str, str]], *, leave_out: Collection[str] = ()) -> list[Table]:
    """The headline's tables; ``leave_out``: columns not measured (a table left with its target
    column alone is left out too)."""
    out = []
    for columns in TABLES:
        kept = [c for c in columns if c not in leave_out]
        if len(kept) > 1:
            out.append(Table(kept, [[row[c] for c in kept] for row in rows]))
    return out


def headline_rows(run: StoryRun, targets: Sequence[StoryTarget]) -> list[dict[str, str]]:
    return [
        cells(t, run.story.after_s, label(t, run), measured_once=run.repeat == 1) for t in targets
    ]

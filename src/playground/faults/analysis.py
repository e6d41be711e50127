"""Reading a prober's outcomes: answers per second, per-phase statistics, recovery.

Every function takes the outcomes (and the moments the fault run marked) and returns the
figures faults.json keeps: plain numbers, or the core's typed
:class:`~playground.faults.results.PhaseStats`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from playground.faults.probe import Outcome
from playground.faults.results import Burst, PhaseStats

# Answers the apps document for an upstream or database that is down.
DOCUMENTED_ERRORS = {502, 503, 504}
# A burst after recovery may take this much longer than the one before (x, then + s).
STUCK_FACTOR, STUCK_SLACK_S = 1.5, 2.0


def count_kinds(outcomes: Iterable[Outcome]) -> dict[str, int]:
    return dict(sorted(Counter(o.kind for o in outcomes).items()))


def timeline(outcomes: Sequence[Outcome], *, bin_s: float = 1.0) -> list[dict[str, float]]:
    """Answers by kind per second (by the time they arrived): the fault as it happened, as
    faults.json keeps it (``t`` and a count per kind)."""
    bins: dict[int, Counter[str]] = {}
    for o in outcomes:
        bins.setdefault(int(o.end // bin_s), Counter())[o.kind] += 1
    return [{"t": round(i * bin_s, 3), **dict(sorted(c.items()))} for i, c in sorted(bins.items())]


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def phase_stats(outcomes: Sequence[Outcome], *, start: float, end: float) -> PhaseStats:
    """Requests that started in [start, end): answers by kind, latency, queueing, throughput.

    ``excess`` is each request's time beyond the delay it asked for: time spent queueing (or
    failing fast, which makes it negative for an error)."""
    inside = [o for o in outcomes if start <= o.start < end]
    ok = [o for o in inside if o.ok]
    secs = [o.seconds for o in ok]
    excess = [o.seconds - o.delay for o in ok]
    span = max(end - start, 1e-9)
    done_in = [o for o in outcomes if o.ok and start <= o.end < end]
    return PhaseStats(
        from_s=round(start, 3),
        to_s=round(end, 3),
        requests=len(inside),
        kinds=count_kinds(inside),
        p50_s=_round(_percentile(secs, 0.5)),
        p90_s=_round(_percentile(secs, 0.9)),
        max_s=_round(max(secs, default=None)),
        excess_p50_s=_round(_percentile(excess, 0.5)),
        excess_max_s=_round(max(excess, default=None)),
        ok_rps=round(len(done_in) / span, 2),
        longest_s=_round(max((o.seconds for o in inside), default=None)),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def longest_overlapping(outcomes: Sequence[Outcome], *, start: float, end: float) -> float | None:
    """The longest request that was in flight at any moment of [start, end]."""
    times = [o.seconds for o in outcomes if o.start <= end and o.end >= start]
    return round(max(times), 3) if times else None


def time_to_recover(outcomes: Sequence[Outcome], *, back_at: float) -> float | None:
    """Seconds from ``back_at`` (the upstream is back) until every request started from then on
    succeeded: 0 if requests started after ``back_at`` and none failed; None if the last ones
    still failed, or if none started after ``back_at`` (nothing measured the recovery:
    :func:`started_after` tells the two apart)."""
    after = sorted((o for o in outcomes if o.start >= back_at), key=lambda o: o.start)
    if not after:
        return None
    failed = [i for i, o in enumerate(after) if not o.ok]
    if not failed:
        return 0.0
    rest = after[failed[-1] + 1 :]
    if not rest:
        return None
    return round(rest[0].start - back_at, 3)


def started_after(outcomes: Sequence[Outcome], *, back_at: float) -> int:
    """How many requests started once the upstream was back: 0 means the recovery was not
    measured (no figure of it may be shown)."""
    return sum(1 for o in outcomes if o.start >= back_at)


def settle_time(outcomes: Sequence[Outcome], *, since: float, limit_s: float) -> float | None:
    """Seconds from ``since`` until every request started from then on was answered 200
    within ``limit_s``: when latency was back to normal. None if it never was."""
    after = sorted((o for o in outcomes if o.start >= since), key=lambda o: o.start)
    slow = [i for i, o in enumerate(after) if not o.ok or o.seconds > limit_s]
    if not slow:
        return 0.0
    rest = after[slow[-1] + 1 :]
    return round(rest[0].start - since, 3) if rest else None


def stuck_verdict(*, before: Burst, after: Burst) -> tuple[bool, str]:
    """Workers are stuck if the burst after the fault fails or takes clearly longer."""
    allowed = before.seconds * STUCK_FACTOR + STUCK_SLACK_S
    if not after.ok:
        return True, f"burst of {after.k} after the fault answered {after.kinds}"
    if after.seconds > allowed:
        return True, (
            f"burst of {after.k} took {after.seconds:.2f} s after the fault against "
            f"{before.seconds:.2f} s before (allowed {allowed:.2f} s): capacity lost"
        )
    return False, (
        f"burst of {after.k} x {after.delay:g} s: {before.seconds:.2f} s before, "
        f"{after.seconds:.2f} s after"
    )


def unexpected_answers(
    kinds: dict[str, int], *, allowed: set[int] = {200} | DOCUMENTED_ERRORS
) -> list[str]:
    """Answers outside what the apps document (a 500 above all) are problems."""
    out = []
    for kind, n in kinds.items():
        if kind.isdigit() and int(kind) not in allowed:
            out.append(f"{n} x HTTP {kind} (undocumented answer)")
    return out

"""Little's law for a fixed pool of threads: what it predicts before anything is measured.

In a steady state, requests in flight = arrival rate x time each one takes (Little's law).
A pool of `workers x threads` can hold that many requests at once, so while the third party
takes `upstream_s` per call the pool answers at most pool / upstream_s requests a second: its
capacity. At the story's rate the pool fills when the upstream time reaches pool / rate (the
incident's own numbers: 640 threads / 300 requests/s = 2.13 s, which is why 2 s was "nearly
full"). Past that, the backlog grows by (rate - capacity) a second; a request that arrives
behind a backlog B waits B / capacity before its own upstream_s, and its user gives up after
`timeout_s`: the pool serves every user in time for (timeout_s - upstream_s) x capacity /
(rate - capacity) seconds, then newly arriving users start to give up and reload, which adds
to the rate (the avalanche).

These hold in a steady state only: constant arrivals, a pool whose threads all take work, a
first-in first-out queue, and no reloads. They do not hold during the first seconds of an
incident (the pool fills over about one upstream time), nor once users reload (the rate is
then no longer the offered one), nor for a server that queues inside a worker whose threads
are busy while another worker's are free (Gunicorn's gthread, docs/story.md). The report
shows the prediction beside what was measured, and says so.
"""

from __future__ import annotations

from playground.core.target import Target
from playground.incident.settings import StorySettings
from playground.incident.storyresults import PoolPrediction


def predict(
    *, workers: int, threads: int, upstream_s: float, rate: float, timeout_s: float
) -> PoolPrediction:
    if workers < 1 or threads < 1 or upstream_s <= 0 or rate <= 0 or timeout_s <= 0:
        raise ValueError(
            "a prediction needs a pool, an upstream time, a rate and a timeout above 0, got "
            f"{workers} x {threads}, {upstream_s} s, {rate}/s, {timeout_s} s"
        )
    pool = workers * threads
    capacity = pool / upstream_s
    over = rate > capacity
    lasts: float | None = None
    if over:
        # Every user already waits longer than the timeout when the upstream alone does.
        lasts = max(0.0, (timeout_s - upstream_s) * capacity / (rate - capacity))
    return PoolPrediction(
        pool=pool,
        upstream_s=upstream_s,
        rate=rate,
        capacity_per_s=capacity,
        tipping_delay_s=pool / rate,
        over=over,
        lasts_s=lasts,
    )


def of(target: Target, settings: StorySettings, *, upstream_s: float) -> PoolPrediction:
    """The prediction for a thread-pool target as it runs (its pool), at the story's rate."""
    if target.per_worker is None:
        raise ValueError(f"{target.name} has no fixed pool to predict for")
    return predict(
        workers=target.workers,
        threads=target.per_worker,
        upstream_s=upstream_s,
        rate=settings.rate,
        timeout_s=settings.timeout,
    )

"""The busiest Gunicorn worker's share of new connections, as measured: the one table the
model draws it from, a share per run (per simulated repeat), not one constant.

Which of gthread's workers the kernel wakes to accept is not in Gunicorn's code; it is measured,
and it moves from run to run (docs/predict.md). Each row below is one measurement on the
workers' shared socket (nginx connecting directly, no `reuse-port`, no HAProxy): the run it
came from, the target, the busiest worker's share before the incident, and what it was read
from. A new measurement is one more line.

The distribution is these rows' shares, smoothed (a Gaussian kernel, Silverman's bandwidth):
a draw picks a measured share at random and moves it by the kernel, kept between an even split
and one worker taking all. The rows are the ten repeats of the `deadline` remedy in one run
(its docs/runs record): before the incident that remedy's app is the pool as it is, so its
split is the same kernel's. The pool as it is was measured ten times in the same run; those
repeats are not in this table, so the model's odds for them are held out. Its predictions of
`deadline` at these settings are not.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class MeasuredShare:
    """One measured split between gthread's two workers."""

    run: str  # the run id, or where a count by hand is written up
    target: str
    share: float  # the busiest worker's share of new connections before the incident
    source: str  # what it was read from


#: Counted by hand (docs/story.md, "How close is a pool to its cliff"): at 40 visits/s with the
#: third party at 2 s (80 requests in flight), one worker stood at 65 OS threads (full) while
#: the other had 24-27, its main thread included: the other took (25.5 - 1) / 80 of the
#: connections, the busiest the rest. A steady load, not the seconds before an incident.
HAND_COUNT = MeasuredShare("counted by hand (docs/story.md)", "gunicorn-threads", 1 - (25.5 - 1) / 80, "OS threads per worker at 40 visits/s, third party 2 s: 65 and 24-27")  # fmt: skip
SHARES: tuple[MeasuredShare, ...] = (
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.651, "repeat 1: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.582, "repeat 2: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.525, "repeat 3: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.535, "repeat 4: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.506, "repeat 5: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.653, "repeat 6: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.519, "repeat 7: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.664, "repeat 8: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.637, "repeat 9: incident/split.py before the incident"),
    MeasuredShare("20261126-220031-story", "gunicorn-threads+deadline", 0.623, "repeat 10: incident/split.py before the incident"),
)  # fmt: skip


def shares() -> list[float]:
    return [m.share for m in SHARES]


def bandwidth(values: list[float]) -> float:
    """Silverman's rule of thumb for a Gaussian kernel: 0.9 min(sd, IQR / 1.34) n^(-1/5)."""
    if len(values) < 2:
        return 0.0
    sd = statistics.stdev(values)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    spread = min(sd, (q3 - q1) / 1.34) or sd
    return float(0.9 * spread * len(values) ** -0.2)


def draw_share(rng: random.Random, *, workers: int) -> float:
    """One run's busiest share: a measured one, moved by the kernel, between 1 / workers (an
    even split) and 1."""
    values = shares()
    share = rng.choice(values) + rng.gauss(0.0, bandwidth(values))
    return min(1.0, max(1.0 / workers, share))

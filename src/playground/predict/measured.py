"""What the model takes from measurement: read from the records of the runs that fit it.

Two of the model's figures are not in any server's code, and each is read here from the
per-repeat records (docs/runs/) of the runs that fit the model, never from a page and never
from a run that scores it (docs/predict.md, "What decides a collapse"):

- the busiest Gunicorn worker's share of new connections: which of gthread's workers the kernel
  wakes to accept is the kernel's choice and moves from run to run, so the model draws one
  share per simulated repeat from the fit run's repeats, each the share of the requests its
  busiest worker began before the incident (the app's own timing log,
  :mod:`playground.incident.mechanism`), smoothed by a Gaussian kernel (Silverman's
  bandwidth) and kept between an even split and one worker taking all. What connects to the
  workers moves the split (:data:`FRONTS`): nginx connecting itself, one worker began 0.66-0.72
  of the requests; HAProxy between them, 0.51-0.57, so each front draws from its own fit run;
- the app's CPU per request under the story's load, per thread-pool server: the median over
  the fit run's repeats of the app's CPU over its answers before the incident;
- how long each answer a gthread worker gives keeps it from taking a new connection
  (:mod:`playground.incident.acceptbusy`): the median over the repeats of its own fit runs
  (:data:`BUSY_FIT_RUNS`), each fitted over the seconds from the incident on, where the
  busiest worker's answers a second change most. The share drawn is the one measured before
  the incident, at the fit runs' load; the model turns it into the kernel's preference where
  both workers are free (:func:`preference`) and lets the answers move it from there;
- how long a thread of a full pool holds each request beyond the delay it asked for
  (:mod:`playground.incident.threadturn`): the call's overhead, the app's CPU and its waits
  for the GIL, and whatever keeps a thread out of a view between two (uWSGI's accept and
  parse; behind HAProxy, the hop back to the next connection and one worker's idle threads
  beside the other's queue), per repeat of its fit run (:data:`TURN_FIT_RUNS`), drawn per
  simulated repeat as the share is.

The fit runs (:data:`FIT_RUNS`) are the pools at their edge, measured with their candidates;
the repeats that score the model are measured after the model's commit.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from playground.core import records
from playground.incident import acceptbusy, runrecords, sharenoise
from playground.incident.mechanism import Mechanism
from playground.incident.settings import MeasuredSplit


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
#: The runs that fit the model, by the target they measured (their records in docs/runs/):
#: `.venv/bin/playground story gunicorn-threads --repeat 20` and `.venv/bin/playground story
#: uwsgi-threads --incident-delay 2.2 --repeat 20`, each repeat with its candidates.
#: HAProxy's fit run: `.venv/bin/playground story gunicorn-threads+haproxy --repeat 10
#: --no-build` (run EY), the split before the incident from its ten repeats; newer repeats of
#: the same target score the model.
FIT_RUNS = {
    "gunicorn-threads": "20261128-135224-story",
    "uwsgi-threads": "20261128-142802-story",
    "gunicorn-threads+haproxy": "20261128-221552-story",
}
#: The runs the busy time per answer is fitted on, gthread behind nginx past its edge, where
#: the busiest worker's answers a second go from its threads' pace during the incident to
#: three times that after it: `.venv/bin/playground story gunicorn-threads --incident-delay 1.8
#: --repeat 3 --no-build` and the same at `--incident-delay 2`, alone on the machine.
BUSY_FIT_RUNS = ("20261204-012743-story", "20261204-013541-story")
#: The runs a thread's time beyond the delay is measured on, by server, model and front, each
#: alone on the machine: uWSGI's pool at 2.28 s, full from the incident's third second until
#: users gave up, `.venv/bin/playground story uwsgi-threads --incident-delay 2.28 --repeat 3
#: --no-build -q`; Gunicorn's threads behind HAProxy at 2.25 s, full from the incident's
#: third second until users gave up, `.venv/bin/playground story gunicorn-threads+haproxy
#: --incident-delay 2.25 --repeat 3 --no-build -q`. Behind nginx alone Gunicorn's pool is
#: never full as one (one worker queues beside the other's free threads): its model has the
#: split and the busy time per answer instead.
TURN_FIT_RUNS = {
    ("uWSGI", "threads", "nginx"): ("20261204-101821-story",),
    ("Gunicorn", "threads", "haproxy"): ("20261204-164746-story",),
}
#: The runs that show how gthread's two workers share a full pool behind HAProxy: its fit run
#: (run EY, at 2 s) and `.venv/bin/playground story gunicorn-threads+haproxy --incident-delay
#: 2.1 --repeat 3 --no-build -q`, alone on the machine. In every repeat the busiest worker held
#: near half the connections once the pool filled, whatever share it began before, so the model
#: hands a connection behind HAProxy to a worker with a free thread where one has one
#: (:mod:`.servers`). Behind nginx the busiest worker held as much as it began (the fit run).
FREE_THREAD_RUNS = ("20261128-221552-story", "20261204-133731-story")
#: What connects to Gunicorn's workers, and the fit run's target whose split it draws from:
#: nginx itself, or HAProxy between nginx and the app (:attr:`.system.System.front`).
FRONTS = {"nginx": "gunicorn-threads", "haproxy": "gunicorn-threads+haproxy"}
#: The app's CPU per request where no fit run measured it under the story's load: the bench's
#: "CPU ms per request" of run 20261127-043533 (`make bench ARGS="--repeat 5"`, quiet), s.
BENCH_CPU_PER_REQUEST_S = {("Gunicorn", "gevent"): 0.0015, ("uWSGI", "gevent"): 0.0015}
#: The fit runs' target of each thread-pool server.
FIT_TARGETS = {("Gunicorn", "threads"): "gunicorn-threads", ("uWSGI", "threads"): "uwsgi-threads"}


def trusted_repeats(record: runrecords.RunRecord, target: str) -> tuple[Mechanism, ...]:
    """The candidates of every trusted repeat of `target` in a run's record."""
    return tuple(
        t.mechanism for t in record.targets if t.name == target and t.valid and t.mechanism
    )


def begun_before(repeats: Sequence[Mechanism]) -> list[float]:
    """The busiest worker's share of the requests begun before the incident, per repeat that
    measured it."""
    found = (m.busiest_share_begun_before for m in repeats)
    return [s for s in found if s is not None]


@functools.cache
def fit_repeats(target: str) -> tuple[Mechanism, ...]:
    """The candidates of every trusted repeat of `target` in its fit run's record."""
    record = runrecords.load(records.RECORDS_DIR / f"{FIT_RUNS[target]}.json")
    return trusted_repeats(record, target)


def own_split(front: str, splits: Sequence[MeasuredSplit]) -> MeasuredSplit | None:
    """The split measured behind `front` on the machine a prediction is for
    (`playground predict --shares-from`), if one was given."""
    return next((s for s in splits if s.front == front), None)


def shares(front: str = "nginx", splits: Sequence[MeasuredSplit] = ()) -> list[float]:
    """The busiest worker's share of the requests begun before the incident, per repeat: of
    the run `splits` gives for the front, else of the front's fit run."""
    if (split := own_split(front, splits)) is not None:
        return list(split.shares)
    return begun_before(fit_repeats(FRONTS[front]))


def fixed_share(front: str, splits: Sequence[MeasuredSplit] = ()) -> float:
    """The share where a run neither pins nor draws one (a sweep, a step beside a measured
    row): the median of the run `splits` gives for the front; without one, behind nginx the
    count by hand, behind HAProxy its fit run's median."""
    if front == "nginx" and own_split(front, splits) is None:
        return HAND_COUNT.share
    return statistics.median(shares(front, splits))


def cpu_per_request_s(server: str, model: str) -> float:
    """The app's CPU per request, s: the fit run's median under the story's load for a thread
    pool, the quiet bench's for gevent."""
    if (server, model) in BENCH_CPU_PER_REQUEST_S:
        return BENCH_CPU_PER_REQUEST_S[(server, model)]
    found = [m.cpu_ms_per_request_before for m in fit_repeats(FIT_TARGETS[(server, model)])]
    return statistics.median(v for v in found if v is not None) / 1000


def bandwidth(values: list[float]) -> float:
    """Silverman's rule of thumb for a Gaussian kernel: 0.9 min(sd, IQR / 1.34) n^(-1/5)."""
    if len(values) < 2:
        return 0.0
    sd = statistics.stdev(values)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    spread = min(sd, (q3 - q1) / 1.34) or sd
    return float(0.9 * spread * len(values) ** -0.2)


def kernel_draw(rng: random.Random, values: list[float]) -> float:
    """One value from a Gaussian kernel around `values`: one of them, moved by Silverman's
    bandwidth."""
    return rng.choice(values) + rng.gauss(0.0, bandwidth(values))


def draw_share(
    rng: random.Random,
    *,
    workers: int,
    front: str = "nginx",
    splits: Sequence[MeasuredSplit] = (),
) -> float:
    """One run's busiest share: a measured one behind the same front (:func:`shares`), moved
    by the kernel, between 1 / workers (an even split) and 1."""
    return min(1.0, max(1.0 / workers, kernel_draw(rng, shares(front, splits))))


def drawn_spread(counted: int, front: str = "nginx") -> float:
    """How far the model's busiest shares would move between its draws if each were counted
    as a repeat's is, over `counted` connections: the fit run's shares' own spread, the kernel
    density's bandwidth and the model's per-connection choice, added in squares."""
    values = shares(front)
    counting = sharenoise.counting_sd(statistics.fmean(values), counted)
    return math.sqrt(statistics.stdev(values) ** 2 + bandwidth(values) ** 2 + counting**2)


@functools.cache
def accept_busy_s() -> float:
    """How long each answer keeps a gthread worker from accepting, s: the median over the
    trusted repeats of :data:`BUSY_FIT_RUNS`."""
    found = []
    for run in BUSY_FIT_RUNS:
        record = runrecords.load(records.RECORDS_DIR / f"{run}.json")
        found += [
            t.mechanism.accept_busy_ms
            for t in record.targets
            if t.valid and t.mechanism and t.mechanism.accept_busy_ms is not None
        ]
    return statistics.median(found) / 1000


@functools.cache
def turns_beyond_s(server: str, model: str, front: str = "nginx") -> tuple[float, ...]:
    """A thread's time per request beyond the delay, s, per trusted repeat of the server's
    :data:`TURN_FIT_RUNS` behind `front` (:data:`FRONTS`); none where no run measured it."""
    found: list[float] = []
    for run in TURN_FIT_RUNS.get((server, model, front), ()):
        record = runrecords.load(records.RECORDS_DIR / f"{run}.json")
        found += [
            t.mechanism.thread_turn_ms / 1000
            for t in record.targets
            if t.valid and t.mechanism and t.mechanism.thread_turn_ms is not None
        ]
    return tuple(found)


def turn_beyond_s(server: str, model: str, seed: int | None, front: str = "nginx") -> float | None:
    """The model's time beyond the delay for one run behind `front`, s: drawn from the
    measured ones (a Gaussian kernel, Silverman's bandwidth, at least 0) for a draw's system
    seed, their median for a run without one; None where no run measured it."""
    values = list(turns_beyond_s(server, model, front))
    if not values:
        return None
    if seed is None:
        return statistics.median(values)
    return max(0.0, kernel_draw(random.Random(f"turn:{seed}"), values))


def preference(share: float, busy_s: float, workers: int, rate: float | None = None) -> float:
    """The kernel's preference for the busiest of two workers where both are free, from the
    share it took before the incident at `rate` visits a second (default: the fit runs'),
    where it gave share x rate answers a second and the other the rest; with other than two
    workers, the share."""
    if workers != 2:
        return share
    rate = fit_rate() if rate is None else rate
    return acceptbusy.preference(share, busy_s * share * rate)


@functools.cache
def fit_rate() -> float:
    """The visits a second the shares' fit runs were measured at (each front's the same)."""
    rates = {
        runrecords.load(records.RECORDS_DIR / f"{FIT_RUNS[t]}.json").story_settings().rate
        for t in FRONTS.values()
    }
    if len(rates) != 1:
        raise ValueError(f"the fit runs of the split were measured at different rates: {rates}")
    return rates.pop()

"""The remedies for a thread pool under a slow third party, as frozen data.

Each remedy is a compose override under `story/remedies/`, layered on a thread-pool story
target (`docker compose -f story/uwsgi-threads.yml -f story/remedies/timeout-3.yml up`), so
the same incident with the same arrivals (same seed) shows what it changes. Each names the
knob in its server's own documentation and what it costs. :func:`variants` gives every remedy
that fits each story target as a target of kind `story`, named `<target>+<remedy>`
(`story-uwsgi-threads+timeout-3`); the registry (`playground.core.scenarios`) lists them, and
`playground story uwsgi-threads+timeout-3` runs one. `scenarios.resolve_story` refuses an
unknown remedy, or one that does not fit the target, with the reason, before anything is
brought up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from playground.core.errors import UsageError
from playground.core.target import Target

THREADS = "threads"


@dataclass(frozen=True)
class Remedy:
    name: str
    title: str
    override: str  # story/remedies/<file>.yml, layered on the target's own file
    knob: str  # the setting, in its server's own words and documentation
    cost: str  # what it costs, in a sentence
    servers: frozenset[str] = frozenset({"uWSGI", "Gunicorn"})
    threads_factor: int = 1  # the pool it runs with, in multiples of --threads
    one_process: bool = False  # the whole pool (workers x threads) in one worker
    pool_bound: int | None = None  # a fixed number in the override that only fits this pool
    builds: bool = False  # the override adds a service with an image of its own to build

    def shape(self, workers: int, threads: int) -> tuple[int, int]:
        """(workers, threads per worker) this remedy runs a pool of workers x threads with."""
        if self.one_process:
            return 1, workers * threads
        return workers, threads * self.threads_factor

    def fits(self, target: Target) -> str | None:
        """Why the remedy does not fit the target; None where it does."""
        if target.model != THREADS:
            return f"{self.name} is a remedy for a fixed thread pool; {target.name} runs gevent"
        if target.server not in self.servers:
            return (
                f"{self.name} changes {self.knob}, a setting of {' and '.join(sorted(self.servers))}; "
                f"{target.name} runs {target.server}"
            )
        return None


def _q(server: str, override: str, knob: str) -> Remedy:
    return Remedy(
        name=f"{server.lower()}-bounded-queue",
        title=f"a bounded queue that fails fast ({knob})",
        override=override,
        knob=knob,
        cost="users beyond the pool get an error at once instead of a late answer; under a "
        "short spike some are refused who would have been served a little late",
        servers=frozenset({server}),
    )


REMEDIES: tuple[Remedy, ...] = (
    Remedy(
        "timeout-1.5",
        "an outbound timeout of 1.5 s",
        "story/remedies/timeout-1.5.yml",
        "requests' timeout= (its docs: always pass one; the app's UPSTREAM_TIMEOUT)",
        "every call slower than 1.5 s fails, on a normal day too",
    ),
    Remedy(
        "timeout-3",
        "an outbound timeout of 3 s",
        "story/remedies/timeout-3.yml",
        "requests' timeout= (its docs: always pass one; the app's UPSTREAM_TIMEOUT)",
        "calls slower than 3 s fail; a thread is still held up to 3 s per call",
    ),
    _q(
        "Gunicorn",
        "story/remedies/gunicorn-bounded-queue.yml",
        "Gunicorn's worker_connections = threads and backlog 16",
    ),
    _q("uWSGI", "story/remedies/uwsgi-bounded-queue.yml", "uWSGI's listen 16"),
    Remedy(
        "limit-conn",
        "nginx sheds load past the pool (limit_conn 128, 503)",
        "story/remedies/limit-conn.yml",
        "nginx's limit_conn and limit_conn_status (ngx_http_limit_conn_module)",
        "a 503 for every request past 128 in flight, however short the spike",
        pool_bound=128,
    ),
    Remedy(
        "read-timeout",
        "nginx gives up on the app after 3 s (504)",
        "story/remedies/read-timeout.yml",
        "nginx's proxy_read_timeout / uwsgi_read_timeout (default 60 s)",
        "users get a 504 instead of waiting, but the app's thread keeps waiting on the third party",
    ),
    Remedy(
        "deadline",
        "drop work whose user has gone (X-Request-Start, 4 s)",
        "story/remedies/deadline.yml",
        "nginx's proxy_set_header X-Request-Start \"t=${msec}\" and the app's DEADLINE",
        "a request that waited 4 s is refused although the third party might have answered",
    ),
    Remedy(
        "breaker",
        "a circuit breaker (circuitbreaker: 5 failures, 10 s) with a lesser page",
        "story/remedies/breaker.yml",
        "circuitbreaker's CircuitBreaker(failure_threshold=5, recovery_timeout=10) on the call, "
        "with a 1.5 s "
        "timeout",
        "users get a lesser page (not counted as goodput) while it is open, also for the calls "
        "that would have succeeded",
    ),
    Remedy(
        "retries",
        "retries (stamina: 3 attempts) with a 1.5 s timeout",
        "story/remedies/retries.yml",
        "stamina.retry_context(attempts=3), exponential backoff with jitter",
        "every retry is one more call to a third party already slow: it multiplies the load",
    ),
    Remedy(
        "retries-budget",
        "the same retries within a budget (20% of requests + 10/s)",
        "story/remedies/retries-budget.yml",
        "a retry budget as Finagle's default (20% of requests plus 10 a second)",
        "past the budget a failure is answered at once, without the retry that might have worked",
    ),
    Remedy(
        "threads-2x",
        "twice the threads",
        "story/remedies/threads-2x.yml",
        "uWSGI's threads / Gunicorn's threads",
        "memory per thread, and the next slowdown that is twice as deep still fills it",
        threads_factor=2,
    ),
    Remedy(
        "threads-4x",
        "four times the threads",
        "story/remedies/threads-4x.yml",
        "uWSGI's threads / Gunicorn's threads",
        "memory per thread, and more threads contending for the GIL when they do run",
        threads_factor=4,
    ),
    Remedy(
        "one-worker",
        "the same threads in one worker",
        "story/remedies/one-worker.yml",
        "Gunicorn's workers = 1 with threads = the whole pool (each gthread worker accepts "
        "up to worker_connections into its own queue)",
        "one process holds one core's worth of Python (the GIL): views that need CPU queue "
        "behind each other, and a crash takes every thread with it",
        servers=frozenset({"Gunicorn"}),
        one_process=True,
    ),
    Remedy(
        "reuse-port",
        "each worker its own socket (reuse_port)",
        "story/remedies/reuse-port.yml",
        "Gunicorn's reuse_port: from 24.0 each worker binds its own SO_REUSEPORT socket and "
        "the kernel spreads connections between them",
        "the kernel's hash spreads connections evenly, not to the worker with free threads; "
        "connections waiting on a worker's socket when it exits are lost",
        servers=frozenset({"Gunicorn"}),
    ),
    Remedy(
        "thunder-lock",
        "one accept lock across the workers (thunder-lock)",
        "story/remedies/thunder-lock.yml",
        "uWSGI's thunder-lock (serialises accept() across the processes, not only the threads)",
        "off by default: it needs process-shared robust mutexes, which not every platform has",
        servers=frozenset({"uWSGI"}),
    ),
    Remedy(
        "haproxy",
        "HAProxy's bounded queue behind nginx (maxconn = the pool, timeout queue 2 s, 503)",
        "story/remedies/haproxy.yml",
        "HAProxy's server maxconn and maxqueue, timeout queue and option abortonclose",
        "one more proxy and hop; a 503 for a request that waited 2 s for a thread, though it "
        "might have been answered in time",
        builds=True,
    ),
)
BY_NAME = {r.name: r for r in REMEDIES}


def variant(target: Target, remedy: Remedy) -> Target:
    """The target with the remedy layered on, in the registry's form."""
    shaped = replace(
        target,
        name=f"{target.name}+{remedy.name}",
        title=f"{target.title}, {remedy.title}",
        overrides=(*target.overrides, remedy.override),
    )
    if target.per_worker is None:
        return shaped
    workers, per_worker = remedy.shape(target.workers, target.per_worker)
    return replace(shaped, workers=workers, per_worker=per_worker)


def variants(targets: Iterable[Target]) -> tuple[Target, ...]:
    """Each target with every remedy that fits it layered on, in the registry's form."""
    return tuple(variant(t, r) for t in targets for r in REMEDIES if r.fits(t) is None)


def remedy_of(target: Target) -> Remedy | None:
    _, plus, name = target.name.partition("+")
    return BY_NAME.get(name) if plus else None


def check_settings(targets: list[Target], *, pool: int) -> None:
    """A remedy whose override holds a fixed number fits only the pool it was written for."""
    for t in targets:
        remedy = remedy_of(t)
        if remedy is not None and remedy.pool_bound is not None and remedy.pool_bound != pool:
            raise UsageError(
                f"{t.name}: {remedy.name} caps at {remedy.pool_bound} (the story's 2 x 64 "
                f"threads), but these settings run a pool of {pool}"
            )


def own_images(targets: list[Target]) -> list[tuple[str, ...]]:
    """The files (target and override) of each remedy that brings an image of its own, for
    the runner to build beside the targets' own."""
    return [t.compose_files for t in targets if (r := remedy_of(t)) is not None and r.builds]

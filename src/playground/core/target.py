"""A target: one URL of one compose file loaded at one default load, as frozen data.

The registry (:mod:`playground.core.scenarios`) lists every target; the modules that define some
of them (the demos, the contenders) build them from this class without importing the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

FLASK_BODY = "Hi there! slow api response"


@dataclass(frozen=True)
class Target:
    name: str
    title: str
    compose_file: str
    service: str  # the service that receives the load
    port: int  # its port inside the compose network
    host_port: int | None  # where a reader reaches it from the host (None: not published)
    requests: int
    concurrency: int
    delay: float = 1.0
    # The services whose threads, processes, CPU and memory are sampled (the app, not nginx).
    sampled: tuple[str, ...] = ()
    # Services to start; empty means the whole file.
    services: tuple[str, ...] = ()
    body: str = FLASK_BODY
    body_is_prefix: bool = False
    tutorial_rps: float | None = None
    tutorial_time_s: float | None = None
    kind: str = "scenario"
    # How the target serves: the facts the README's table, the Makefile's lists and the tests
    # derive from (and a test checks against the compose file's own WORKERS/THREADS/...).
    server: str = ""  # the program that runs the app: Flask dev server, Gunicorn, uWSGI, ...
    model: str = ""  # single (one request at a time), threads, or gevent (greenlets)
    workers: int = 1  # processes running the app
    # Threads (model threads) or greenlets (model gevent: async cores, worker connections) per
    # worker; None: no cap, one per connection.
    per_worker: int | None = None
    proxy: str | None = None  # what stands in front of the app (nginx), if anything
    database: bool = False  # each request also waits on PostgreSQL
    notes: tuple[str, ...] = field(default=())
    # A target may insist on its own load tool (a key of playground.core.load.TOOLS) and, for
    # duration-bound tools such as wrk, its own duration; None follows the run's settings.
    tool: str | None = None
    duration_s: float | None = None
    # Published figure for a demo, as text when it is not a single requests/s number.
    published: str | None = None
    # Extra compose files layered on top (`docker compose -f FILE -f OVERRIDE ...`).
    overrides: tuple[str, ...] = ()
    # (workers, per_worker) under its scale override (scale/), where that override changes
    # them (two processes where one would run out of descriptors at c=10,000); a test keeps it
    # equal to the override's WORKERS/THREADS/ASYNC_CORES/WORKER_CONNECTIONS.
    scale_shape: tuple[int, int | None] | None = None

    @property
    def compose_files(self) -> tuple[str, ...]:
        return (self.compose_file, *self.overrides)

    def at_scale(self, override: str) -> Target:
        """The target with its scale override layered on, in the shape that override gives it;
        where the shape changes, the title says so (the report's headings come from it)."""
        target = replace(self, overrides=(*self.overrides, override))
        if self.scale_shape is None or self.scale_shape == (self.workers, self.per_worker):
            return target
        workers, per_worker = self.scale_shape
        each = "" if per_worker is None else f" x {per_worker}"
        return replace(
            target,
            workers=workers,
            per_worker=per_worker,
            title=f"{self.title}; scale override: {workers} workers{each}",
        )

    @property
    def capacity(self) -> int | None:
        """Requests the app can hold in flight at once (None: no cap of its own)."""
        return None if self.per_worker is None else self.workers * self.per_worker

    @property
    def app_services(self) -> tuple[str, ...]:
        return self.sampled or (self.service,)

    def url(self, *, delay: float) -> str:
        return f"http://{self.service}:{self.port}/?delay={plain_decimal(delay)}"

    def host_url(self, *, delay: float) -> str | None:
        if self.host_port is None:
            return None
        return f"http://127.0.0.1:{self.host_port}/?delay={plain_decimal(delay)}"

    def body_ok(self, body: str) -> bool:
        body = body.rstrip("\n")
        return body.startswith(self.body) if self.body_is_prefix else body == self.body


def same_port_target(
    name: str,
    title: str,
    compose_file: str,
    service: str,
    port: int,
    *,
    kind: str,
    n: int,
    c: int,
    delay: float,
    **kw: Any,
) -> Target:
    """A demo's or a contender's target: its load as n, c and delay, and one port, since
    inside the network each service listens on its published port."""
    return Target(
        name=name,
        title=title,
        compose_file=compose_file,
        service=service,
        port=port,
        host_port=port,
        requests=n,
        concurrency=c,
        delay=delay,
        kind=kind,
        **kw,
    )


def plain_decimal(seconds: float) -> str:
    """A delay as the apps accept it: a plain decimal (f"{x:g}" would write 1e-05, refused)."""
    return f"{seconds:.9f}".rstrip("0").rstrip(".") or "0"

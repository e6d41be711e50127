"""What the model runs: one target's servers and app, read from what the playground runs.

The numbers come from the target's compose file and its remedy's override (the app's and the
server's environment, the kernel's `tcp_abort_on_overflow`, nginx's lines under
story/remedies/), with the servers' own defaults where a file sets nothing (Gunicorn's
`gunicorn.conf.py`, nginx's documentation). Four figures are the playground's measurements, not
the servers' code, each read from the records of the runs that fit the model
(:mod:`.measured`): how unevenly Gunicorn's workers take connections, the app's CPU per
request under the story's load, how long each answer keeps a gthread worker from accepting,
and a full uWSGI pool's time per request beyond the delay.
Nothing here is fitted to a story row's outcome.

Three remedies change where connections wait rather than the app, and are read the same way:
HAProxy's stage between nginx and the app (:class:`HAProxy`, from the `haproxy` service's
config file and environment), Gunicorn's `--reuse-port` (each worker a socket of its own, from
GUNICORN_CMD_ARGS), and uWSGI's thunder-lock, which the model reads as nothing: it serialises
accept() between uWSGI's processes, so it decides which process wakes for the next connection,
while the queue stays the one kernel queue the workers share and any idle thread takes its
oldest connection, which is how the model already runs uWSGI (:mod:`.servers`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from playground.core import remedies
from playground.core.errors import UsageError
from playground.core.target import Target
from playground.incident.settings import StorySettings
from playground.predict import healthchecks, measured

ROOT = Path(__file__).resolve().parents[3]

#: The share of new connections the busiest of Gunicorn's workers takes (the kernel wakes the
#: worker that waited last) where a run neither pins nor draws one (a sweep, a step beside a
#: measured row) and nginx connects to the workers itself: the count by hand
#: (:data:`.measured.HAND_COUNT`; behind HAProxy, :func:`.measured.fixed_share`).
#: `playground predict`'s draws each take one from the measured shares (:mod:`.measured`).
GTHREAD_BUSIEST_SHARE = measured.HAND_COUNT.share
#: nginx's proxy_read_timeout / uwsgi_read_timeout and proxy_connect_timeout default, s.
NGINX_TIMEOUT_S = 60.0
#: The app waits for the third party's answer the delay it asked for plus this (querydelay.py's
#: UPSTREAM_GRACE, 5 s by default).
UPSTREAM_GRACE_S = 5.0
#: Gunicorn's defaults (gunicorn.conf.py: WORKER_CONNECTIONS, BACKLOG).
GUNICORN_WORKER_CONNECTIONS = 1000
GUNICORN_BACKLOG = 2048
SERVERS = ("uWSGI", "Gunicorn")


@dataclass(frozen=True)
class HAProxy:
    """HAProxy's server line and timeouts as haproxy.cfg sets them (HAProxy 3.0's manual)."""

    maxconn: int | None  # requests in flight to the app at once; None: no limit
    queue_timeout: float  # `timeout queue` (by default `timeout connect`): then a 503
    abort_on_close: bool  # `option abortonclose`: a queued request whose client went is dropped


@dataclass(frozen=True)
class System:
    """One target as the model runs it."""

    name: str
    server: str  # uWSGI or Gunicorn
    model: str  # threads or gevent
    workers: int
    per_worker: int  # threads, or greenlets
    listen: int  # the kernel's accept queue (uWSGI's listen, Gunicorn's backlog), per socket
    worker_connections: int | None  # Gunicorn: connections a worker holds at most
    busiest_share: float | None  # Gunicorn: the busiest worker's share of new connections
    abort_on_overflow: bool  # the kernel resets a connection that finds the queue full
    cpu_s: float  # the app's CPU per request, under the process's GIL
    limit_conn: int | None  # nginx: a 503 past this many requests in flight
    read_timeout: float  # nginx gives up on the app (504)
    upstream_timeout: float | None  # the app's outbound timeout (UPSTREAM_TIMEOUT)
    deadline: float | None  # the app refuses a request that waited longer (DEADLINE)
    retries: int  # attempts per call (RETRIES), stamina's backoff between them
    budget: tuple[float, float] | None  # RETRY_BUDGET ratio, per second
    breaker: tuple[int, float] | None  # CIRCUIT_BREAKER failures, reset s
    reuse_port: bool = False  # Gunicorn: each worker its own socket, the kernel's hash picks
    haproxy: HAProxy | None = None  # HAProxy between nginx and the app
    # gthread behind nginx: how long each answer keeps its worker from accepting (measured
    # there, where connections arrive whatever the answers; HAProxy connects the next request
    # as an answer frees a slot, which the fit runs did not measure: None behind it).
    accept_busy_s: float | None = None
    # uWSGI's threads: a thread's time per request beyond the delay it asked for, measured in a
    # full pool (:func:`.measured.turn_beyond_s`); the thread is held for what of it the app's
    # CPU does not account for. None: the CPU alone (no run measured it).
    turn_beyond_s: float | None = None
    # gthread behind HAProxy: a new connection goes to a worker with a free thread where one
    # has one (:mod:`.servers`; measured, :data:`.measured.FREE_THREAD_RUNS`).
    to_free_thread: bool = False
    # gthread: the visits a second `busiest_share` was measured at; None: the fit runs'.
    share_rate: float | None = None
    # Docker's health checks that reach the app (:mod:`.healthchecks`), from the compose files.
    checks: tuple[healthchecks.Check, ...] = ()

    @property
    def busiest_preference(self) -> float | None:
        """gthread: the kernel's preference for the busiest worker where every worker's main
        thread is free, from `busiest_share`, the share it took at the fit runs' load."""
        if self.busiest_share is None:
            return None
        return measured.preference(
            self.busiest_share, self.accept_busy_s or 0.0, self.workers, self.share_rate
        )

    @property
    def pool(self) -> int:
        return self.workers * self.per_worker

    @property
    def front(self) -> str:
        """What connects to the app's workers (:data:`.measured.FRONTS`): HAProxy where a
        remedy puts it between nginx and the app, else nginx."""
        return "haproxy" if self.haproxy else "nginx"


def _substitute(value: Any, env: Mapping[str, str]) -> str:
    """Compose's ${NAME:-default}, from the story's STORY_* variables."""

    def one(m: re.Match[str]) -> str:
        return env.get(m.group(1), m.group(2) or "")

    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", one, str(value))


@functools.cache
def _compose(path: Path) -> dict[str, Any]:
    """A compose file, read once a process (a map reads the same few files thousands of
    times); its callers only read it."""
    data = yaml.safe_load(path.read_text())
    return data if isinstance(data, dict) else {}


def _service(path: Path, name: str) -> dict[str, Any]:
    data = _compose(path)
    service = (data.get("services") or {}).get(name) or {}
    return service if isinstance(service, dict) else {}


def _nginx_lines(project: Path, service: dict[str, Any]) -> str:
    """The text of the nginx lines a remedy mounts (`./remedies/x.conf:/etc/nginx/remedy/...`),
    relative to the project's folder (the first file's, as Compose reads them)."""
    text = []
    for volume in service.get("volumes") or []:
        source, _, mounted = str(volume).partition(":")
        if mounted.startswith("/etc/nginx/remedy/"):
            text.append((project / source).read_text())
    return "\n".join(text)


def _directive(text: str, name: str) -> str | None:
    m = re.search(rf"^\s*{name}\s+([^;]+);", text, re.MULTILINE)
    return m.group(1).split()[-1] if m else None


def _seconds(text: str | None) -> float | None:
    return None if text is None else float(text.rstrip("s"))


def _pair(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    first, _, second = text.partition(":")
    return float(first), float(second)


#: HAProxy's time units (configuration.txt, 2.5 "Time format"); a bare number is milliseconds.
HAPROXY_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _haproxy_time(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s|m|h|d)?", text)
    if m is None:
        raise ValueError(f"not an HAProxy time: {text!r}")
    return float(m.group(1)) * HAPROXY_UNITS[m.group(2) or "ms"]


def _haproxy(project: Path, service: dict[str, Any], story: Mapping[str, str]) -> HAProxy | None:
    """HAProxy as the `haproxy` service runs it: the config file it mounts (relative to the
    project's folder), with "${NAME}" expanded from the service's environment as HAProxy
    expands it; None where no file mounts one."""
    cfg = None
    for volume in service.get("volumes") or []:
        source, _, mounted = str(volume).partition(":")
        if mounted.partition(":")[0].endswith(".cfg"):
            cfg = (project / source).read_text()
    if cfg is None:
        return None
    env = {k: _substitute(v, story) for k, v in (service.get("environment") or {}).items()}
    text = re.sub(r'"?\$\{(\w+)\}"?', lambda m: env.get(m.group(1), ""), cfg)
    lines = [line.split("#")[0].strip() for line in text.splitlines()]

    def setting(*words: str) -> str | None:
        """The value of the last line `words value` (a backend's line follows the defaults')."""
        n = len(words)
        found = [p[n] for line in lines if (p := line.split())[:n] == [*words] and len(p) > n]
        return found[-1] if found else None

    server = next((line.split() for line in lines if line.startswith("server ")), [])
    maxconn = server[server.index("maxconn") + 1] if "maxconn" in server else None
    queue = setting("timeout", "queue") or setting("timeout", "connect")
    return HAProxy(
        maxconn=int(maxconn) if maxconn and int(maxconn) > 0 else None,
        queue_timeout=_haproxy_time(queue) if queue else float("inf"),
        abort_on_close=any(line.split() == ["option", "abortonclose"] for line in lines),
    )


@dataclass
class Files:
    """What the target's compose files say, merged as Compose merges them."""

    env: dict[str, str]  # the app's environment
    abort: bool  # the kernel's tcp_abort_on_overflow
    nginx: str  # nginx's extra lines (story/remedies/*.conf)
    haproxy: HAProxy | None  # HAProxy between nginx and the app
    checks: tuple[healthchecks.Check, ...]  # Docker's health checks that reach the app


def read(target: Target, settings: StorySettings) -> Files:
    """The app's environment, the kernel's abort-on-overflow, nginx's extra lines, HAProxy and
    the health checks, merged over the target's compose file and its overrides as Compose
    merges them."""
    story = settings.compose_env()
    paths = [ROOT / rel for rel in (target.compose_file, *target.overrides)]
    checks = healthchecks.read(paths, lambda v: _substitute(v, story), _compose)
    files = Files(env={}, abort=False, nginx="", haproxy=None, checks=checks)
    project = (ROOT / target.compose_file).parent
    for rel in (target.compose_file, *target.overrides):
        path = ROOT / rel
        app = _service(path, "flask_app")
        environment = app.get("environment") or {}
        files.env.update({k: _substitute(v, story) for k, v in environment.items()})
        sysctls = app.get("sysctls") or {}
        abort = str(sysctls.get("net.ipv4.tcp_abort_on_overflow", "0")) == "1"
        files.abort = files.abort or abort
        files.nginx += _nginx_lines(project, _service(path, "ingress"))
        files.haproxy = _haproxy(project, _service(path, "haproxy"), story) or files.haproxy
    return files


def covers(target: Target) -> bool:
    """Whether the model runs `target`: uWSGI's and Gunicorn's thread pools and gevent workers."""
    return target.server in SERVERS and target.model in ("threads", "gevent")


def system_for(target: Target, settings: StorySettings) -> System:
    """The target as the model runs it; a target the model does not cover is refused."""
    if not covers(target):
        raise UsageError(
            f"{target.name}: the model covers uWSGI's and Gunicorn's thread pools and gevent "
            f"workers, not {target.server} ({target.model})"
        )
    files = read(target, settings)
    env, nginx = files.env, files.nginx
    gunicorn = target.server == "Gunicorn"
    gthread = gunicorn and target.model == "threads"
    front = "haproxy" if files.haproxy else "nginx"
    remedy = remedies.remedy_of(target)
    workers, threads = (settings.workers, settings.threads)
    if remedy is not None:
        workers, threads = remedy.shape(workers, threads)
    per_worker = threads if target.model == "threads" else settings.async_cores
    worker_connections = int(env.get("WORKER_CONNECTIONS", GUNICORN_WORKER_CONNECTIONS))
    # Gunicorn's own way to add a flag to the config file's (the reuse-port override).
    reuse_port = gunicorn and "--reuse-port" in env.get("GUNICORN_CMD_ARGS", "").split()
    return System(
        name=target.name,
        server=target.server,
        model=target.model,
        workers=int(env.get("WORKERS", workers)),
        per_worker=int(env.get("THREADS", per_worker)) if target.model == "threads" else per_worker,
        listen=int(env.get("BACKLOG", GUNICORN_BACKLOG))
        if gunicorn
        else int(env.get("LISTEN", 100)),
        worker_connections=worker_connections if gunicorn else None,
        busiest_share=(
            measured.fixed_share(front, settings.shares_from)
            if settings.busiest_share is None
            else settings.busiest_share
        )
        if gunicorn and not reuse_port
        else None,
        abort_on_overflow=files.abort,
        cpu_s=measured.cpu_per_request_s(target.server, target.model),
        limit_conn=int(v) if (v := _directive(nginx, "limit_conn")) else None,
        read_timeout=_seconds(_directive(nginx, "proxy_read_timeout")) or NGINX_TIMEOUT_S,
        upstream_timeout=_seconds(env.get("UPSTREAM_TIMEOUT") or None),
        deadline=_seconds(env.get("DEADLINE") or None) if "X-Request-Start" in nginx else None,
        retries=int(env.get("RETRIES") or 1),
        budget=_pair(env.get("RETRY_BUDGET")),
        breaker=(int(b[0]), b[1]) if (b := _pair(env.get("CIRCUIT_BREAKER"))) else None,
        reuse_port=reuse_port,
        haproxy=files.haproxy,
        accept_busy_s=measured.accept_busy_s() if gthread and front == "nginx" else None,
        turn_beyond_s=measured.turn_beyond_s(
            target.server, target.model, settings.system_seed, front
        ),
        to_free_thread=gthread and front == "haproxy",
        share_rate=split.rate
        if (split := measured.own_split(front, settings.shares_from))
        else None,
        checks=files.checks,
    )

"""What the servers see, once a second, beside the generator's log of attempts.

Read from the host, never through a published port: the kernel's accept queue of the app's
listening socket (from the container's /proc/PID/net/tcp), uWSGI's stats server (busy threads
or greenlets, and its own listen-queue figure), nginx's stub_status, slow_api's count of
requests waiting on it, and the app container's OS threads and CPU (playground.core.sampling).
Containers are reached by their address on the scenario's network, which a Linux host routes
to. After the run, nginx's access log gives each request's end, status, time and id (499: the
client had gone before the answer), and slow_api's calls log each call's id and when it was
answered: joined, the calls answered after nginx had ended their request.

The split between workers: for each worker process of the app (a child of the container's main
process), the connections to the app's port it holds open, found by matching the socket inodes
among its file descriptors (/proc/PID/fd) against the container's TCP table. A thread of
uWSGI's accepts only when idle, so there it is the worker's busy threads; Gunicorn's gthread
worker accepts whatever its threads, so there it is its busy threads plus the connections
queued inside it.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playground.core.sampling import (
    Periodic,
    ProcReader,
    StatsReader,
    cgroup_procs_path,
    read_process,
    reader_for,
)
from playground.incident.captured import AccessRecord, AppTiming, ServerSample, UpstreamCall
from playground.story.plan import API_PORT, APP_PORT, STATS_PORT, STUB_STATUS_PORT

POLL_TIMEOUT_S = 0.8
TCP_LISTEN = "0A"


def accept_queue(net_tcp_text: str, *, port: int) -> int | None:
    """Connections waiting to be accepted by the socket listening on `port`, from a
    /proc/net/tcp table (for a LISTEN socket the kernel reports them as rx_queue); None when
    nothing listens there. Several listening sockets on one port (SO_REUSEPORT) add up."""
    found = None
    for line in net_tcp_text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 5 or parts[3] != TCP_LISTEN:
            continue
        if int(parts[1].rsplit(":", 1)[1], 16) != port:
            continue
        found = (found or 0) + int(parts[4].split(":")[1], 16)
    return found


def connection_inodes(net_tcp_text: str, *, port: int) -> set[int]:
    """The socket inodes of the TCP connections whose local port is `port` (the listening
    sockets left out), from a /proc/net/tcp table."""
    found = set()
    for line in net_tcp_text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 10 or parts[3] == TCP_LISTEN:
            continue
        if int(parts[1].rsplit(":", 1)[1], 16) == port and (inode := int(parts[9])):
            found.add(inode)
    return found


def socket_inodes(fd_links: Sequence[str]) -> set[int]:
    """The socket inodes among a process's file descriptors' link targets (`socket:[N]`)."""
    return {
        int(link[len("socket:[") : -1])
        for link in fd_links
        if link.startswith("socket:[") and link.endswith("]")
    }


def worker_connections(
    net_tcp_text: str, sockets: Mapping[int, set[int]], *, port: int
) -> list[int]:
    """Per worker, in order of pid: the connections to `port` among the sockets it holds
    (`sockets`: pid -> socket inodes)."""
    held = connection_inodes(net_tcp_text, port=port)
    return [len(sockets[pid] & held) for pid in sorted(sockets)]


def fd_links(pid: int) -> list[str]:
    """Where a process's file descriptors point; empty when it is gone."""
    links = []
    try:
        with os.scandir(f"/proc/{pid}/fd") as entries:
            for entry in entries:
                try:
                    links.append(os.readlink(entry.path))
                except OSError:  # closed since the listing
                    continue
    except OSError:
        return []
    return links


def worker_pids(app_pid: int) -> list[int]:
    """The app's worker processes: the children of the container's main process."""
    path = cgroup_procs_path(app_pid)
    try:
        pids = [int(p) for p in path.read_text().split()] if path else []
    except OSError:
        return []
    return [s.pid for p in pids if (s := read_process(p)) is not None and s.ppid == app_pid]


def uwsgi_figures(stats: dict[str, Any]) -> dict[str, int | None]:
    """Busy workers, busy cores (threads or greenlets in a request) and uWSGI's listen queue."""
    workers = stats.get("workers") or []
    cores = [c for w in workers for c in (w.get("cores") or [])]
    return {
        "uwsgi_listen_queue": stats.get("listen_queue"),
        "uwsgi_listen_queue_errors": stats.get("listen_queue_errors"),
        "busy_workers": sum(1 for w in workers if w.get("status") == "busy"),
        "busy_cores": sum(1 for c in cores if c.get("in_request")),
        "cores": len(cores),
    }


def stub_status_figures(text: str) -> dict[str, int | None]:
    """nginx's stub_status: connections open now, and those waiting for the upstream's
    answer (writing) or reading the request."""
    lines = text.splitlines()
    try:
        active = int(lines[0].split(":")[1])
        fields = lines[3].split()
        return {
            "nginx_active": active,
            "nginx_reading": int(fields[1]),
            "nginx_writing": int(fields[3]),
            "nginx_waiting": int(fields[5]),
        }
    except (IndexError, ValueError):
        return {}


def parse_access_log(text: str) -> list[AccessRecord]:
    """Lines of the story's log_format: `$msec $status $request_time $upstream_response_time
    $request_id` (the id is missing from logs written before nginx passed it on)."""
    records = []
    for line in text.splitlines():
        fields = line.split()
        try:
            end, status, took = fields[:3]
            rid = fields[4] if len(fields) > 4 else None
            records.append(AccessRecord(float(end), int(status), float(took), rid))
        except ValueError:  # not such a line
            continue
    return records


def parse_calls_log(text: str) -> list[UpstreamCall]:
    """Lines of slow_api's calls log: `<request id> <arrived> <answered>`, epoch seconds."""
    calls = []
    for line in text.splitlines():
        try:
            rid, arrived, answered = line.split()
            calls.append(UpstreamCall(rid, float(arrived), float(answered)))
        except ValueError:  # not such a line (a partial last line, say)
            continue
    return calls


def parse_timing_log(text: str) -> list[AppTiming]:
    """Lines of the app's timing log (flask_app/timing.py): `<request id> <pid> <began>
    <call began> <call ended> <ended>`, epoch seconds, `-` for a call never made."""

    def instant(field: str) -> float | None:
        return None if field == "-" else float(field)

    timings = []
    for line in text.splitlines():
        try:
            rid, pid, began, c0, c1, ended = line.split()
            timings.append(
                AppTiming(rid, int(pid), float(began), instant(c0), instant(c1), float(ended))
            )
        except ValueError:  # not such a line (a partial last line, say)
            continue
    return timings


def fetch_text(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=POLL_TIMEOUT_S) as resp:
            body: bytes = resp.read()
            return body.decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def fetch_json(url: str) -> dict[str, Any] | None:
    """A JSON object from `url`; None when nothing or something else answered."""
    body = fetch_text(url)
    try:
        value = json.loads(body) if body else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def upstream_in_flight(api_ip: str | None) -> int | None:
    """The calls waiting on the third party now (slow_api's own count)."""
    stats = fetch_json(f"http://{api_ip}:{API_PORT}/control/stats") if api_ip else None
    value = stats.get("in_flight") if stats else None
    return value if isinstance(value, int) else None


@dataclass
class ServerAddresses:
    """Where to look, found once the scenario is up."""

    app_pid: int | None
    app_container: str
    app_ip: str | None
    ingress_ip: str | None
    api_ip: str | None
    uwsgi_stats: bool


class ServerSampler(Periodic):
    """Samples the servers every second on a background thread, on the host's monotonic
    clock (the generator's clock too: containers share the kernel's)."""

    sample_on_exit = False

    def __init__(self, targets: ServerAddresses) -> None:
        super().__init__(interval=1.0, name="story-sampler")
        self.t = targets
        self.samples: list[ServerSample] = []
        self._reader: ProcReader | StatsReader = reader_for(
            container=targets.app_container, pid=targets.app_pid
        )

    def sample_once(self) -> ServerSample:
        now = time.monotonic()
        figures: dict[str, float | list[int] | None] = {}
        if self.t.app_pid:
            try:
                text = Path(f"/proc/{self.t.app_pid}/net/tcp").read_text()
                figures["listen_queue"] = accept_queue(text, port=APP_PORT)
                sockets = {p: socket_inodes(fd_links(p)) for p in worker_pids(self.t.app_pid)}
                if sockets:
                    figures["worker_connections"] = worker_connections(text, sockets, port=APP_PORT)
            except OSError:
                pass
        if self.t.uwsgi_stats and self.t.app_ip:
            stats = fetch_json(f"http://{self.t.app_ip}:{STATS_PORT}/")
            figures.update(uwsgi_figures(stats) if stats is not None else {})
        if self.t.ingress_ip:
            body = fetch_text(f"http://{self.t.ingress_ip}:{STUB_STATUS_PORT}/stub_status")
            figures.update(stub_status_figures(body) if body else {})
        figures["upstream_in_flight"] = upstream_in_flight(self.t.api_ip)
        if (app := self._reader.read(now)) is not None:
            figures.update(
                threads=app.threads,
                processes=app.processes,
                cpu_pct=round(app.cpu_pct, 1),
                rss_mb=round(app.rss_mb, 1),
            )
        sample = ServerSample(now, {k: v for k, v in figures.items() if v is not None})
        self.samples.append(sample)
        return sample

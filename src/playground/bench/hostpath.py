"""Why a load sent from the host through a published port fails where the same load, sent
from the scenario's own network, does not.

A published port (`ports: ["127.0.0.1:3000:3000"]`) is served on the host by Docker's
userland proxy, `docker-proxy`: one process per published port that accepts each client and
opens a second connection of its own to the container. Load from the host therefore meets
that process's limits before it meets the server's:

- it holds two descriptors per connection, against the open-file limit it inherits from the
  Docker daemon (`LimitNOFILE` of docker.service);
- it stops for good at its first failed `accept()` (e.g. out of descriptors), and is left
  defunct: the port then refuses every connection, though the container is healthy, until
  the scenario is brought down and up;
- its listen queue is capped by the host's `net.core.somaxconn`.

`snapshot` reads all of that from /proc before and after a load (pass the proxies seen
before as `known` afterwards); `causes` turns the difference
into sentences for the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from playground.bench.diagnosis import near_fd_limit
from playground.core.sampling import open_files_limit

PROC = Path("/proc")
PROXY = "docker-proxy"
DESCRIPTORS_PER_CONNECTION = 2  # the client's socket and the proxy's own to the container
#: The host's connection-tracking table is "nearly full" from this share of its maximum on: a
#: full table drops new connections (a SYN the kernel cannot track is discarded).
CONNTRACK_NEARLY_FULL = 0.9


@dataclass(frozen=True)
class Proxy:
    """One docker-proxy process, as /proc shows it."""

    pid: int
    state: str  # R, S, D ... or Z: exited, not yet reaped (defunct)
    open_files: int | None  # None: /proc/PID/fd not readable (not root)
    limit: int | None

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X", "gone")


@dataclass(frozen=True)
class HostPath:
    """The host side of one published port at one moment."""

    port: int
    proxies: tuple[Proxy, ...]
    listen_overflows: int | None  # the host's TcpExtListenOverflows (cumulative)
    somaxconn: int | None
    conntrack: tuple[int, int] | None  # (entries, maximum)
    listening: bool | None = None  # does anything on the host listen on the port?


def snapshot(*, port: int, proc: Path = PROC, known: Sequence[Proxy] = ()) -> HostPath:
    """The host side of `port` now; `known`: proxies seen before, followed by pid once they
    have exited (a defunct process has no command line left to recognise it by)."""
    proxies = {p.pid: p for p in find_proxies(port=port, proc=proc)}
    for p in known:
        if p.pid not in proxies:
            entry = proc / str(p.pid)
            proxies[p.pid] = _proxy(entry) if entry.is_dir() else replace(p, state="gone")
    return HostPath(
        port=port,
        proxies=tuple(proxies[pid] for pid in sorted(proxies)),
        listen_overflows=_netstat(proc / "net" / "netstat", "TcpExt", "ListenOverflows"),
        somaxconn=_int(proc / "sys" / "net" / "core" / "somaxconn"),
        conntrack=_pair(
            proc / "sys" / "net" / "netfilter" / "nf_conntrack_count",
            proc / "sys" / "net" / "netfilter" / "nf_conntrack_max",
        ),
        listening=_listening(proc / "net", port),
    )


def find_proxies(*, port: int, proc: Path = PROC) -> tuple[Proxy, ...]:
    """The docker-proxy processes forwarding host port `port` (one per address family)."""
    found = []
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if not args or Path(args[0]).name != PROXY or _option(args, "-host-port") != str(port):
            continue
        found.append(_proxy(entry))
    return tuple(sorted(found, key=lambda p: p.pid))


def causes(*, before: HostPath, after: HostPath, concurrency: int, output: str) -> list[str]:
    """What, on the host path, explains a failed load; [] when nothing there does."""
    port = after.port
    notes = []
    was = [p for p in before.proxies if p.alive]
    now = {p.pid: p for p in after.proxies}
    gone = [now.get(p.pid, replace(p, state="gone")) for p in was]
    for p in (p for p in gone if not p.alive):
        how = "is defunct (exited, not reaped)" if p.state == "Z" else "has exited"
        notes.append(
            f"{PROXY} (pid {p.pid}), which forwards 127.0.0.1:{port} to the container, {how}: it "
            "stops for good at its first failed accept(), e.g. when it runs out of open files. "
            "The port now refuses every connection although the container is healthy, until "
            "the scenario is brought down and up"
        )
    limit = next((p.limit for p in was if p.limit), None)
    needed = DESCRIPTORS_PER_CONNECTION * concurrency
    peak = max((p.open_files or 0 for p in [*was, *after.proxies]), default=0)
    if limit and (near_fd_limit(needed, limit) or near_fd_limit(peak, limit)):
        notes.append(
            f"{PROXY} holds {DESCRIPTORS_PER_CONNECTION} descriptors per connection (the client's "
            f"and its own to the container): c={concurrency} needs about {needed}, against its "
            f"open-file limit of {limit}, inherited from the Docker daemon (LimitNOFILE of "
            "docker.service)"
        )
    if before.listen_overflows is not None and after.listen_overflows is not None:
        overflows = after.listen_overflows - before.listen_overflows
        if overflows > 0:
            cap = (
                f" (net.core.somaxconn = {after.somaxconn} caps its queue)"
                if after.somaxconn
                else ""
            )
            notes.append(
                f"listen queues on the host overflowed {overflows} times during the load: "
                f"{PROXY} did not accept as fast as the clients connected{cap}, so their "
                "handshakes were dropped and retried"
            )
    if after.conntrack and after.conntrack[0] >= CONNTRACK_NEARLY_FULL * after.conntrack[1]:
        notes.append(
            f"the host's connection-tracking table is nearly full ({after.conntrack[0]} "
            f"of net.netfilter.nf_conntrack_max = {after.conntrack[1]})"
        )
    if not was and after.listening is False and _reset_or_refused(output):
        notes.append(
            f"nothing on the host listens on port {port} although the scenario publishes it: "
            f"the {PROXY} that forwarded it has exited (it stops for good at its first failed "
            "accept(), e.g. after an earlier overload). Bring the scenario down and up"
        )
    if not before.proxies and not notes:
        return []  # no userland proxy on this port (userland-proxy off): nothing of ours to say
    if notes or _reset_or_refused(output):
        notes.append(
            f"the published port goes through {PROXY}; the same load from the load-generator "
            "container on the scenario's network (the default, without --from-host) measures "
            "the server itself"
        )
    return notes


def _listening(net: Path, port: int) -> bool | None:
    """Whether a TCP socket listens on `port` (state 0A in /proc/net/tcp and tcp6)."""
    seen = None
    for name in ("tcp", "tcp6"):
        try:
            rows = (net / name).read_text().splitlines()[1:]
        except OSError:
            continue
        seen = bool(seen)
        for row in rows:
            fields = row.split()
            if len(fields) > 3 and fields[3] == "0A" and fields[1].endswith(f":{port:04X}"):
                return True
    return seen


def _reset_or_refused(output: str) -> bool:
    return any(
        s in output
        for s in (
            "Connection reset by peer",
            "Connection refused",
            "Test aborted after 10 failures",
        )
    )


def _proxy(entry: Path) -> Proxy:
    pid = int(entry.name)
    try:
        # The state follows the command name in parentheses, which may itself hold spaces.
        state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        state = "gone"
    try:
        open_files = sum(1 for _ in (entry / "fd").iterdir())
    except OSError:
        open_files = None
    limit = open_files_limit(pid, proc=entry.parent)
    return Proxy(pid=pid, state=state, open_files=open_files, limit=limit)


def _option(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _netstat(path: Path, group: str, key: str) -> int | None:
    """One counter from /proc/net/netstat (pairs of lines: names, then values)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith(group + ":") and values.startswith(group + ":"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=False))
            return int(table[key]) if key in table else None
    return None


def _int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _pair(a: Path, b: Path) -> tuple[int, int] | None:
    x, y = _int(a), _int(b)
    return (x, y) if x is not None and y else None

"""Threads, processes, CPU and memory of containers, sampled while a load runs.

This is what the tutorial read off `top -H` by eye: every OS thread of every process in the
container. On a Linux host the sampler reads `/proc` for each process in the container's
cgroup (exact per-process thread counts, resident memory and CPU time, ~1 ms a sample). Where
the host cannot see the container's processes (Docker Desktop), it falls back to
`docker stats`, which reports the cgroup's task count (threads) once a second or so.

Only the server's own process tree counts: the container's main process and its descendants.
Processes started by `docker exec` (health checks, a reader's `top -H`) are the container's
too, but not the server's, and would otherwise add a phantom process now and then.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from playground.core.errors import PlaygroundError
from playground.core.results import Sample

INTERVAL_S = 0.5
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_MB = 1 / 1024  # VmRSS is in kB


@dataclass
class Series:
    """Every sample of one container, with the before/peak/after figures the report shows."""

    container: str
    samples: list[Sample] = field(default_factory=list)

    def peak(self, attr: str) -> float | None:
        values = [getattr(s, attr) for s in self.samples]
        return max(values) if values else None


# --- reading one container ------------------------------------------------------------------
def cgroup_procs_path(pid: int) -> Path | None:
    """The cgroup.procs file listing every process of the container that `pid` belongs to."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2, unified hierarchy
            candidate = Path("/sys/fs/cgroup") / path.lstrip("/") / "cgroup.procs"
        elif "pids" in controllers.split(",") or "memory" in controllers.split(","):
            candidate = Path("/sys/fs/cgroup") / controllers / path.lstrip("/") / "cgroup.procs"
        else:
            continue
        if candidate.exists():
            return candidate
    return None


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    threads: int
    rss_kb: int
    cpu_ticks: int


class SamplingError(PlaygroundError):
    """A figure read in a form the sampler does not know: no number is better than a wrong one."""


def read_process(pid: int, *, proc: Path = Path("/proc")) -> ProcStat | None:
    """Parent, threads, resident kB and CPU ticks of one process; None if it is gone."""
    try:
        status = (proc / str(pid) / "status").read_text()
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    return parse_process(pid, status=status, stat=stat)


def parse_process(pid: int, *, status: str, stat: str) -> ProcStat:
    """One process's figures from the text of its /proc status and stat files."""
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    threads = int(fields.get("Threads", "0").strip())
    rss_kb = int(fields.get("VmRSS", "0 kB").split()[0]) if "VmRSS" in fields else 0
    # Fields after the command name (which may contain spaces) start after the last ')'.
    after = stat.rsplit(")", 1)[1].split()
    cpu_ticks = int(after[11]) + int(after[12])  # utime + stime
    return ProcStat(
        pid=pid, ppid=int(after[1]), threads=threads, rss_kb=rss_kb, cpu_ticks=cpu_ticks
    )


def open_files_limit(pid: int | None, *, proc: Path = Path("/proc")) -> int | None:
    """The soft open-files limit of a process (a container's is the daemon's, inherited); None
    if it is gone, unlimited or unreadable."""
    if pid is None:
        return None
    try:
        text = (proc / str(pid) / "limits").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("Max open files"):
            fields = line.split()
            return int(fields[3]) if len(fields) > 3 and fields[3].isdigit() else None
    return None


def process_tree(stats: list[ProcStat], root: int) -> list[ProcStat]:
    """The processes among `stats` that are `root` or descend from it."""
    by_pid = {s.pid: s for s in stats}
    kept = []
    for s in stats:
        seen: set[int] = set()
        cur: ProcStat | None = s
        while cur is not None and cur.pid != root and cur.pid not in seen:
            seen.add(cur.pid)
            cur = by_pid.get(cur.ppid)
        if cur is not None and cur.pid == root:
            kept.append(s)
    return kept


class ProcReader:
    """Reads a container's processes from the host's /proc through its cgroup (or, given
    `pids`, a fixed set of host processes such as a load generator run on the host)."""

    def __init__(
        self,
        procs_path: Path | None = None,
        *,
        root: int | None = None,
        pids: list[int] | None = None,
        proc: Path = Path("/proc"),
    ) -> None:
        self.procs_path = procs_path
        self.root = root
        self.pids = pids
        self.proc = proc
        self._last: tuple[float, int] | None = None

    def read(self, t: float) -> Sample | None:
        if self.pids is not None:
            pids = self.pids
        elif self.procs_path is not None:
            try:
                pids = [int(p) for p in self.procs_path.read_text().split()]
            except OSError:
                return None
        else:
            return None
        stats = [s for s in (read_process(pid, proc=self.proc) for pid in pids) if s is not None]
        if self.root is not None:
            stats = process_tree(stats, self.root)
        ticks = sum(s.cpu_ticks for s in stats)
        now = time.monotonic()
        cpu = 0.0
        if self._last is not None and now > self._last[0]:
            cpu = 100.0 * (ticks - self._last[1]) / CLK_TCK / (now - self._last[0])
        self._last = (now, ticks)
        return Sample(
            t=t,
            threads=sum(s.threads for s in stats),
            processes=len(stats),
            rss_mb=sum(s.rss_kb for s in stats) * PAGE_MB,
            cpu_pct=max(cpu, 0.0),
        )


class StatsReader:
    """Fallback through `docker stats`: the cgroup's task count stands for threads."""

    def __init__(self, container: str) -> None:
        self.container = container

    def read(self, t: float) -> Sample | None:
        proc = subprocess.run(
            ["docker", "stats", "--no-stream", "--format", "{{json .}}", self.container],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            return None
        return parse_stats(proc.stdout, t=t)


def parse_stats(text: str, *, t: float) -> Sample:
    """A sample from `docker stats --no-stream --format '{{json .}}'`'s first line: the
    cgroup's task count stands for threads, the memory in use (before the slash) for RSS."""
    data = json.loads(text.strip().splitlines()[0])
    return Sample(
        t=t,
        threads=int(data.get("PIDs", 0) or 0),
        processes=0,
        rss_mb=_mem_mb(data.get("MemUsage", "0B / 0B").split("/")[0]),
        cpu_pct=float(data.get("CPUPerc", "0%").rstrip("%") or 0),
    )


# docker stats writes memory in binary units (go-units' BytesSize), the decimal ones read too.
# In MiB, as the samples keep it (VmRSS's "kB" above are KiB).
MIB = 1024 * 1024
MEM_UNITS_MB = {
    "B": 1 / MIB,
    "KiB": 1 / 1024,
    "MiB": 1,
    "GiB": 1024,
    "TiB": 1024 * 1024,
    "kB": 1e3 / MIB,
    "MB": 1e6 / MIB,
    "GB": 1e9 / MIB,
}


def _mem_mb(text: str) -> float:
    """`12.5MiB` -> 12.5; an amount in a unit not known here is an error, not 0."""
    text = text.strip()
    for unit, factor in sorted(MEM_UNITS_MB.items(), key=lambda kv: -len(kv[0])):
        number = text.removesuffix(unit)
        if number != text:
            try:
                return float(number) * factor
            except ValueError:
                break
    raise SamplingError(f"docker stats: memory {text!r} is in no unit the sampler knows")


def reader_for(*, container: str, pid: int | None) -> ProcReader | StatsReader:
    path = cgroup_procs_path(pid) if pid else None
    return ProcReader(path, root=pid) if path is not None else StatsReader(container)


# --- sampling in the background --------------------------------------------------------------
class Periodic:
    """Calls :meth:`sample_once` on entry, then every ``interval`` seconds on a background
    thread (on a schedule that does not drift by the time a sample takes) until exit; once more
    on exit where ``sample_on_exit``."""

    sample_on_exit = True

    def __init__(self, *, interval: float, name: str) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._error: BaseException | None = None

    def sample_once(self) -> object:
        raise NotImplementedError

    def _loop(self) -> None:
        next_at = time.monotonic()
        while True:
            next_at += self.interval
            if self._stop.wait(max(0.0, next_at - time.monotonic())):
                return
            try:
                self.sample_once()
            except Exception as exc:  # raised again on exit, in the measuring thread
                self._error = exc
                return

    def __enter__(self) -> Self:
        self.sample_once()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._error is not None:
            raise self._error
        if self.sample_on_exit:
            self.sample_once()


class Sampler(Periodic):
    """Samples containers every `interval` seconds, times from entry, until stopped."""

    def __init__(
        self, readers: dict[str, ProcReader | StatsReader], *, interval: float = INTERVAL_S
    ) -> None:
        super().__init__(interval=interval, name="sampler")
        self.readers = readers
        self.series = {name: Series(container=name) for name in readers}
        self._t0 = time.monotonic()

    def sample_once(self) -> None:
        t = time.monotonic() - self._t0
        for name, reader in self.readers.items():
            sample = reader.read(t)
            if sample is not None:
                self.series[name].samples.append(sample)

    def __enter__(self) -> Self:
        self._t0 = time.monotonic()
        return super().__enter__()


def combine(series: Iterable[Series]) -> list[Sample]:
    """Sum several containers' series sample by sample (same ticks), for a scenario total."""
    every = list(series)
    if not every:
        return []
    length = min(len(s.samples) for s in every)
    out = []
    for i in range(length):
        group = [s.samples[i] for s in every]
        out.append(
            Sample(
                t=round(group[0].t, 3),
                threads=sum(g.threads for g in group),
                processes=sum(g.processes for g in group),
                rss_mb=round(sum(g.rss_mb for g in group), 3),
                cpu_pct=round(sum(g.cpu_pct for g in group), 3),
            )
        )
    return out


def wait_for(predicate: Callable[[], bool], *, timeout: float, step: float = 0.1) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()

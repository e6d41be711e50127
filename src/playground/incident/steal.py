"""The host's steal time, sampled while a load runs: CPU time the hypervisor gave to other
guests while this machine had work for it (the eighth column of `/proc/stat`'s `cpu` line).

On a virtual machine a process can be ready to run and still not run, because the host took
the CPU away; the guest's scheduler cannot help it. The open-loop generator's sends then leave
late however light the generator is, so every story run records the steal beside the send
lag, second by second (docs/story.md, "How far to trust the figures"). /proc/stat counts in
clock ticks (USER_HZ, 1/100 s here), summed over every CPU: a second with one tick of steal
lost 10 ms of one CPU, as late as a send that breaks the self-check's p99 bound.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from playground.core.sampling import Periodic

STAT = Path("/proc/stat")
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
INTERVAL_S = 1.0
# /proc/stat's `cpu` line: user nice system idle iowait irq softirq steal (guest time is
# already counted in user).
STEAL_COLUMN = 7


@dataclass(frozen=True)
class CpuTimes:
    """Every CPU's time since boot, in seconds: stolen, and all of it (steal included)."""

    at: float  # time.monotonic() when read
    steal_s: float
    total_s: float


def parse_cpu_times(text: str, *, at: float) -> CpuTimes | None:
    """The machine's line of /proc/stat (`cpu  ...`); None where there is none (not Linux)."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu" and len(fields) > STEAL_COLUMN + 1:
            ticks = [int(v) for v in fields[1 : STEAL_COLUMN + 2]]
            return CpuTimes(
                at=at, steal_s=ticks[STEAL_COLUMN] * TICK_S, total_s=sum(ticks) * TICK_S
            )
    return None


def read_cpu_times(stat: Path = STAT) -> CpuTimes | None:
    try:
        return parse_cpu_times(stat.read_text(), at=time.monotonic())
    except OSError:
        return None


class StealSampler(Periodic):
    """Reads the machine's CPU times once a second until exit."""

    def __init__(self, *, interval: float = INTERVAL_S, stat: Path = STAT) -> None:
        super().__init__(interval=interval, name="steal")
        self.stat = stat
        self.samples: list[CpuTimes] = []

    def sample_once(self) -> None:
        if (sample := read_cpu_times(self.stat)) is not None:
            self.samples.append(sample)


@dataclass(frozen=True)
class Steal:
    """The steal over a run: in all, and in each second from the run's second 0."""

    steal_s: float
    total_s: float
    per_second_s: list[float]

    @property
    def share(self) -> float | None:
        return self.steal_s / self.total_s if self.total_s > 0 else None


def over_run(samples: Sequence[CpuTimes], *, t0: float, seconds: int) -> Steal | None:
    """The steal between the first and last sample; each interval's steal is put in the
    second of the run (from `t0`, on the monotonic clock) that holds its middle."""
    if len(samples) < 2:
        return None
    per_second = [0.0] * seconds
    for a, b in pairwise(samples):
        k = int((a.at + b.at) / 2 - t0)
        if 0 <= k < seconds:
            per_second[k] += b.steal_s - a.steal_s
    return Steal(
        steal_s=samples[-1].steal_s - samples[0].steal_s,
        total_s=samples[-1].total_s - samples[0].total_s,
        per_second_s=[round(v, 3) for v in per_second],
    )

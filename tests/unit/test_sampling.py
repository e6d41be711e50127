"""sampling.py: what is read from /proc about the server's processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from playground.core.results import Sample
from playground.core.sampling import (
    ProcReader,
    Sampler,
    SamplingError,
    Series,
    _mem_mb,
    combine,
    open_files_limit,
    parse_process,
    parse_stats,
    process_tree,
    read_process,
)

DATA = Path(__file__).resolve().parents[1] / "data"

LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            {soft:<20} 1048576              files
"""


def proc_with_limits(tmp_path: Path, soft: str) -> Path:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "limits").write_text(LIMITS.format(soft=soft))
    return tmp_path


def test_the_soft_open_files_limit_is_read_from_proc(tmp_path: Path) -> None:
    assert open_files_limit(7, proc=proc_with_limits(tmp_path, "1024")) == 1024
    assert open_files_limit(os.getpid()) is not None  # this very process, on Linux


def test_no_limit_when_unlimited_gone_or_unknown(tmp_path: Path) -> None:
    assert open_files_limit(7, proc=proc_with_limits(tmp_path, "unlimited")) is None
    assert open_files_limit(8, proc=tmp_path) is None  # the process has gone
    assert open_files_limit(None) is None


def test_series_are_summed_sample_by_sample_into_the_models_samples() -> None:
    a = Series("app", [Sample(0.0, 3, 1, 10.0, 5.0), Sample(0.5, 4, 1, 11.0, 6.0)])
    b = Series("worker", [Sample(0.01, 2, 2, 20.0, 1.25)])
    assert combine([a, b]) == [Sample(t=0.0, threads=5, processes=3, rss_mb=30.0, cpu_pct=6.25)]
    assert combine([]) == []


# --- captured text (tests/data): a Gunicorn gevent container of the war story, its /proc -----
# The container's processes as its cgroup listed them: the master (21172), its two workers,
# and a health check `docker exec` had started (23654, a child of the container's shim, not
# of the master). Read by eye from the files (`grep -E 'PPid|Threads|VmRSS' */status`, and
# utime + stime, the 14th and 15th fields of stat): the figures the tests expect.
PROC = DATA / "proc_gunicorn_gevent"
MASTER = 21172
BY_EYE = {  # pid: (ppid, threads, VmRSS kB, utime + stime ticks)
    21172: (21152, 2, 21636, None),
    21310: (21172, 7, 43348, 967 + 257),
    21311: (21172, 4, 43620, None),
    23654: (21152, 1, 11464, None),
}


def test_each_process_is_read_from_its_captured_status_and_stat() -> None:
    for pid, (ppid, threads, rss_kb, ticks) in BY_EYE.items():
        stat = read_process(pid, proc=PROC)
        assert stat is not None
        assert (stat.pid, stat.ppid, stat.threads, stat.rss_kb) == (pid, ppid, threads, rss_kb)
        if ticks is not None:
            assert stat.cpu_ticks == ticks
    assert read_process(99999, proc=PROC) is None  # gone between the listing and the read


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(
    tmp_path: Path,
) -> None:
    stat = (PROC / "21310" / "stat").read_text().replace("(gunicorn)", "(a (b) c)")
    parsed = parse_process(21310, status=(PROC / "21310" / "status").read_text(), stat=stat)
    assert (parsed.ppid, parsed.cpu_ticks) == (21172, 967 + 257)


def test_only_the_servers_own_tree_counts_not_a_health_check() -> None:
    every = [read_process(pid, proc=PROC) for pid in BY_EYE]
    tree = process_tree([s for s in every if s is not None], MASTER)
    assert sorted(s.pid for s in tree) == [21172, 21310, 21311]


def test_the_reader_sums_the_trees_threads_and_memory_from_the_cgroup_listing() -> None:
    reader = ProcReader(PROC / "cgroup.procs", root=MASTER, proc=PROC)
    sample = reader.read(1.5)
    assert sample is not None
    assert (sample.t, sample.threads, sample.processes) == (1.5, 2 + 7 + 4, 3)
    assert sample.rss_mb == pytest.approx((21636 + 43348 + 43620) / 1024)
    assert sample.cpu_pct == 0.0  # one reading: no interval to measure CPU over yet
    assert ProcReader(PROC / "no-such-cgroup.procs", proc=PROC).read(0) is None


def test_docker_stats_text_gives_tasks_memory_and_cpu() -> None:
    text = (DATA / "docker_stats_gunicorn_gevent.json").read_text()
    sample = parse_stats(text, t=2.0)
    # "PIDs":"16", "MemUsage":"95.56MiB / 23.54GiB", "CPUPerc":"54.68%"
    assert (sample.t, sample.threads, sample.processes) == (2.0, 16, 0)
    assert sample.rss_mb == pytest.approx(95.56)
    assert sample.cpu_pct == pytest.approx(54.68)


@pytest.mark.parametrize(
    "text,mib",
    [
        ("0B", 0.0),
        ("512KiB", 0.5),
        ("95.56MiB", 95.56),
        ("1.5GiB", 1536.0),
        ("1TiB", 1024 * 1024.0),
        ("1048576B", 1.0),
        ("1000kB", 1e6 / 2**20),
        ("2MB", 2e6 / 2**20),
        (" 3GB ", 3e9 / 2**20),
    ],
)
def test_memory_in_every_unit_docker_writes(text: str, mib: float) -> None:
    assert _mem_mb(text) == pytest.approx(mib)


@pytest.mark.parametrize("text", ["12PiB", "12", "", "--", "MiB", "1.2.3MiB", "12 mib"])
def test_memory_in_a_unit_not_known_is_an_error_not_zero(text: str) -> None:
    with pytest.raises(SamplingError, match="no unit the sampler knows"):
        _mem_mb(text)


class _Unreadable:
    """A reader whose second reading meets a figure it cannot read."""

    def __init__(self) -> None:
        self.reads = 0

    def read(self, t: float) -> Sample | None:
        self.reads += 1
        if self.reads > 1:
            raise SamplingError("docker stats: memory '1PiB' is in no unit the sampler knows")
        return Sample(t, 1, 1, 1.0, 0.0)


def test_a_reading_that_fails_in_the_background_fails_the_measurement() -> None:
    reader = _Unreadable()
    with pytest.raises(SamplingError, match="no unit the sampler knows"):
        with Sampler({"app": reader}, interval=0.01) as sampler:  # type: ignore[dict-item]
            deadline = time.monotonic() + 10
            while reader.reads < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
    assert len(sampler.series["app"].samples) == 1


def _spend(proc: Path, pid: int, *, utime: int, stime: int) -> None:
    """Add CPU ticks to one process's recorded stat, as a later reading would show them."""
    path = proc / str(pid) / "stat"
    head, tail = path.read_text().rsplit(")", 1)
    after = tail.split()
    after[11], after[12] = str(int(after[11]) + utime), str(int(after[12]) + stime)
    path.write_text(f"{head}) {' '.join(after)}\n")


def test_the_readers_cpu_is_the_trees_ticks_between_two_readings_over_the_time_between(
    tmp_path, monkeypatch
) -> None:
    """Two readings of the recorded processes 2 s apart, the tree 30 + 10 ticks busier in the
    second and a health check outside it 500: CPU % is 100 x 40 ticks / CLK_TCK / 2 s."""
    import shutil

    from playground.core import sampling

    proc = tmp_path / "proc"
    shutil.copytree(PROC, proc)
    clock = iter([100.0, 102.0])
    monkeypatch.setattr(sampling.time, "monotonic", lambda: next(clock))
    reader = ProcReader(proc / "cgroup.procs", root=MASTER, proc=proc)
    first = reader.read(0.0)
    _spend(proc, 21310, utime=30, stime=0)
    _spend(proc, 21311, utime=0, stime=10)
    outside = next(pid for pid in BY_EYE if pid not in (21172, 21310, 21311))
    _spend(proc, outside, utime=500, stime=0)
    second = reader.read(2.0)
    assert first is not None and second is not None
    assert first.cpu_pct == 0.0
    assert second.cpu_pct == pytest.approx(100 * 40 / sampling.CLK_TCK / 2.0)

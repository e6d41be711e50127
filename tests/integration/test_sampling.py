"""The sampler against a container whose memory is known: a process that holds 256 MiB it has
written to (every page resident) must be reported at that size, within 10 %, both from /proc
through the container's cgroup and from `docker stats`. About five seconds."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from playground.core.sampling import ProcReader, StatsReader, reader_for
from tests.integration.conftest import sh, wait_until

pytestmark = pytest.mark.integration

HELD_MIB = 256
HOLD = (
    "import time\n"
    f"held = b'x' * ({HELD_MIB} << 20)  # written, so resident\n"
    "print('holding', flush=True)\n"
    "time.sleep(120)\n"
)


@pytest.fixture()
def holding() -> Iterator[tuple[str, int]]:
    """A container of its own (named after this process, so no other test meets it) whose
    only process holds HELD_MIB; removed afterwards, whatever happened."""
    name = f"flask-playground-sampling-{os.getpid()}"
    sh(
        "docker",
        "run",
        "-d",
        "--rm",
        "--name",
        name,
        "flask-playground/openloop",
        "python3",
        "-c",
        HOLD,
    )
    try:
        wait_until(
            lambda: "holding" in sh("docker", "logs", name, check=False).stdout,
            timeout=60,
            what="the allocation to be written",
        )
        pid = int(sh("docker", "inspect", "--format", "{{.State.Pid}}", name).stdout)
        yield name, pid
    finally:
        sh("docker", "rm", "--force", name, check=False)
    assert name not in sh("docker", "ps", "--all", "--format", "{{.Names}}").stdout.split()


def test_a_known_allocation_is_reported_within_ten_percent(holding) -> None:
    name, pid = holding
    proc_reader = reader_for(container=name, pid=pid)
    assert isinstance(proc_reader, ProcReader)  # the host sees the container's processes
    from_proc = proc_reader.read(0.0)
    from_stats = StatsReader(name).read(0.0)
    assert from_proc is not None and from_stats is not None
    for how, sample in (("/proc", from_proc), ("docker stats", from_stats)):
        assert 0.9 * HELD_MIB <= sample.rss_mb <= 1.1 * HELD_MIB, (how, sample)
    assert from_proc.processes == 1 and from_proc.threads == 1, from_proc

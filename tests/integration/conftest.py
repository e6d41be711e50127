"""Bringing scenarios up for real, loading them from the host, and watching their threads.

Each test class names one compose file; the class fixture brings it up (`up --wait`), and
tears it down afterwards, checking that nothing (container, network, volume) is left behind.
Loads go to the published 127.0.0.1 ports, as a reader's would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from playground.core.sampling import Sampler, reader_for
from tests import lanes

ROOT = Path(__file__).resolve().parents[2]
LISTEN_BACKLOG = (Path(__file__).with_name("listen_backlog.py")).read_text()

# The health checks look every second here instead of every two (compose/common.yml's
# HEALTH_INTERVAL): `up --wait` returns about a second sooner, some seventy times a run. The
# benchmarks keep 2 s, where a check's own CPU would weigh on what they measure.
os.environ.setdefault("HEALTH_INTERVAL", "1s")

# ---- two lanes (tests/lanes.py) -------------------------------------------------------------
# The story files' nginx, published here instead of 8080 (where the nginx scenarios are): the
# story's lane runs beside the nginx scenarios.
os.environ.setdefault("STORY_PORT", "18080")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sorted by `run_order`; a module's own tests keep their order (the sort is stable), and
    each lane runs its tests in the order collected. Shuffled instead with `-p randomly`
    (pytest-randomly: modules, classes and tests in an order of its seed's)."""
    if lanes.shuffled(config):
        return
    items.sort(key=lambda item: lanes.run_order(item.path.stem))


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under `-n`: one lane a worker, each lane's tests in order on its own worker."""
    from xdist.scheduler import LoadScopeScheduling

    class Lanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lanes.lane_of(nodeid)

    return Lanes(config, log)


@pytest.fixture(scope="session", autouse=True)
def runner_lock(tmp_path_factory) -> Iterator[Path]:
    """The runner lock of this worker's runs (PLAYGROUND_LOCK, inherited by every `playground`
    the tests start): the tests' own, not the machine's usual one, whatever order or subset
    runs. A lane may move it again (the story's, test_story.py)."""
    lock = tmp_path_factory.mktemp("runner-lock") / "runner.lock"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLAYGROUND_LOCK", str(lock))
        yield lock


def sh(*argv: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} failed:\n{proc.stderr[-3000:]}{proc.stdout[-2000:]}"
        )
    return proc


def project_of(compose_file: str) -> str:
    return json.loads(
        sh("docker", "compose", "-f", compose_file, "config", "--format", "json").stdout
    )["name"]


def leftovers(project: str) -> dict[str, list[str]]:
    label = f"label=com.docker.compose.project={project}"
    return {
        kind: sh("docker", *cmd, "--filter", label, "--quiet").stdout.split()
        for kind, cmd in (
            ("containers", ("ps", "--all")),
            ("networks", ("network", "ls")),
            ("volumes", ("volume", "ls")),
        )
    }


def wait_until(predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


@dataclass
class Up:
    compose_file: str
    project: str

    def container(self, service: str) -> str:
        cid = sh(
            "docker", "compose", "-f", self.compose_file, "ps", "--quiet", service
        ).stdout.strip()
        assert cid, f"{service} is not running"
        return cid

    def exec(self, service: str, *argv: str, check: bool = False) -> subprocess.CompletedProcess:
        return sh(
            "docker", "compose", "-f", self.compose_file, "exec", "-T", service, *argv, check=check
        )

    def listen_queue(self, service: str, port: int) -> int:
        """The listen backlog the kernel holds for `service`'s port (ss's Send-Q), read in the
        container's own network namespace by a container that shares it (listen_backlog.py):
        what the server really asked for. No root needed."""
        proc = sh(
            "docker",
            "run",
            "--rm",
            "--network",
            f"container:{self.container(service)}",
            "flask-playground/openloop",
            "python3",
            "-c",
            LISTEN_BACKLOG,
            str(port),
            timeout=60,
        )
        found = {int(n) for n in proc.stdout.split()}
        assert found, f"nothing listens on {service}:{port}"
        assert len(found) == 1, f"{service}:{port} listens with several backlogs: {found}"
        return found.pop()

    def in_network(self, *argv: str) -> subprocess.CompletedProcess:
        """Run a command in the load-generator image on the scenario's own network."""
        return sh(
            "docker",
            "run",
            "--rm",
            "--network",
            f"{self.project}_default",
            "flask-playground/loadgen",
            *argv,
            check=False,
            timeout=120,
        )

    def threads_during(self, service: str, *, url: str, n: int, c: int) -> dict[str, int]:
        """Threads of `service` before and at peak while ab loads `url` from the host."""
        cid = self.container(service)
        pid = int(sh("docker", "inspect", "--format", "{{.State.Pid}}", cid).stdout.strip())
        reader = reader_for(container=cid, pid=pid)
        with Sampler({service: reader}, interval=0.25) as before:
            time.sleep(0.5)
        with Sampler({service: reader}, interval=0.25) as during:
            result = ab(url, n=n, c=c)
        assert result["failed"] == 0 and result["non_2xx"] == 0, result
        series = during.series[service]
        return {
            "before": int(before.series[service].peak("threads")),
            "peak": int(series.peak("threads")),
            "processes": int(series.peak("processes")),
        }


@pytest.fixture(scope="class")
def up(request) -> Up:
    compose_file = request.cls.compose_file
    project = project_of(compose_file)
    proc = sh(
        "docker",
        "compose",
        "-f",
        compose_file,
        "up",
        "-d",
        "--wait",
        "--wait-timeout",
        "180",
        check=False,
        timeout=400,
    )
    if proc.returncode != 0:
        logs = sh("docker", "compose", "-f", compose_file, "logs", "--tail", "30", check=False)
        sh("docker", "compose", "-f", compose_file, "down", "--volumes", check=False)
        pytest.fail(
            f"{compose_file} did not come up:\n{proc.stderr[-2000:]}\n{logs.stdout[-3000:]}"
        )
    yield Up(compose_file=compose_file, project=project)
    sh(
        "docker",
        "compose",
        "-f",
        compose_file,
        "down",
        "--volumes",
        "--remove-orphans",
        "--timeout",
        "10",
    )
    left = leftovers(project)
    assert not any(left.values()), f"{compose_file} left things behind: {left}"


def get(port: int, query: str = "delay=0", *, timeout: float = 30) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?{query}", timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def concurrent_get(port: int, *, k: int, delay: float) -> tuple[float, list[int]]:
    """k requests at once; (seconds until the last answered, their statuses)."""
    started = time.monotonic()
    with ThreadPoolExecutor(k) as pool:
        statuses = [s for s, _ in pool.map(lambda _: get(port, f"delay={delay}"), range(k))]
    return time.monotonic() - started, statuses


AB_FIELDS = {
    "time_s": r"Time taken for tests:\s+([\d.]+)",
    "complete": r"Complete requests:\s+(\d+)",
    "failed": r"Failed requests:\s+(\d+)",
    "non_2xx": r"Non-2xx responses:\s+(\d+)",
}


def ab(url: str, *, n: int, c: int) -> dict[str, float]:
    """ApacheBench from the host, exactly as the README shows it."""
    proc = sh("ab", "-r", "-s", "60", "-n", str(n), "-c", str(c), url, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = {}
    for key, pattern in AB_FIELDS.items():
        match = re.search(pattern, proc.stdout)
        out[key] = float(match.group(1)) if match else 0.0
    assert out["complete"] == n, proc.stdout + proc.stderr
    return out


# ---- the scale profile, run once for test_scale.py and test_scale_failures.py --------------

SCALE_SWEEP = (50, 500, 2000)  # uwsgi-gevent and gunicorn-threads: the curve
SCALE_C = 2000  # the largest concurrency a CI run affords
SCALE_AT_C = ("gunicorn-gevent", "nginx-uwsgi")  # these at SCALE_C only, with uwsgi-gevent's


@pytest.fixture(scope="session")
def scale_sweep(tmp_path_factory) -> dict:
    """One `playground scale` for both scale modules: one probe, uWSGI gevent's c=2000 point
    measured once (test_scale reads its curve, test_scale_failures its c=2000 figures)."""
    results_dir = tmp_path_factory.mktemp("scale")
    # The ideal rate at half a core (default a quarter) halves the delays: measured, gevent at
    # 0.94 of ideal at c=2000 and the pool at 0.38 at c=500; 0.94 of ideal in all three modes
    # at c=2000 with 0 failed.
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("playground")),
            "scale",
            "uwsgi-gevent",
            "gunicorn-threads",
            *(f"{name}@{SCALE_C}" for name in SCALE_AT_C),
            "--sweep",
            ",".join(map(str, SCALE_SWEEP)),
            "--utilisation",
            "0.5",
            "--no-build",
            "--quiet",
            "--results-dir",
            str(results_dir),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((results_dir / "latest" / "results.json").read_text())

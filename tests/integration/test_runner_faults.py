"""The runner under faults: interrupted at any point (SIGINT, SIGTERM) it leaves no container,
network or volume behind and keeps every finished result whole; a second runner refuses
instead of fighting over ports; a scenario that never gets healthy fails after a bounded wait
with its last log lines, and the run goes on to the next one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground import cli
from playground.core import runstore
from playground.core.scenarios import REGISTRY
from playground.core.target import Target
from tests.integration.conftest import ROOT, leftovers, sh, wait_until

pytestmark = pytest.mark.integration

PLAYGROUND = str(Path(sys.executable).with_name("playground"))
LOAD = ("-n", "60", "-c", "10", "--delay", "0.5")  # ~3.5 s of load per scenario
OURS = ("async-gevent-pywsgi", "async-gevent-gunicorn", "flask-playground")


def snapshot() -> dict[str, set[str]]:
    """Everything Docker has, as `docker ps -a`, `docker network ls`, `docker volume ls` list it."""
    return {
        "containers": set(sh("docker", "ps", "-a", "--format", "{{.Names}}").stdout.split()),
        "networks": set(sh("docker", "network", "ls", "--format", "{{.Name}}").stdout.split()),
        "volumes": set(sh("docker", "volume", "ls", "--format", "{{.Name}}").stdout.split()),
    }


def assert_nothing_left(before: dict[str, set[str]]) -> None:
    after = snapshot()
    new = {kind: sorted(after[kind] - before[kind]) for kind in after}
    # Other things on this daemon may come and go; nothing of the playground may stay.
    ours = {kind: [n for n in names if n.startswith(OURS)] for kind, names in new.items()}
    assert not any(ours.values()), f"left behind: {ours} (all new: {new})"
    for project in OURS[:2]:
        assert not any(leftovers(project).values()), project


def containers(prefix: str) -> list[str]:
    return [
        n
        for n in sh("docker", "ps", "-a", "--format", "{{.Names}}").stdout.split()
        if n.startswith(prefix)
    ]


def run_dir(results_dir: Path) -> Path | None:
    found = [p for p in results_dir.glob("2*") if (p / "results.json").exists()]
    return found[0] if found else None


def finished_entries(results_dir: Path) -> list[dict]:
    found = run_dir(results_dir)
    if found is None:
        return []
    try:
        return json.loads((found / "results.json").read_text())["scenarios"]
    except (OSError, ValueError):
        return []


def start(results_dir: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PLAYGROUND, *args, "--no-build", "--results-dir", str(results_dir)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(proc: subprocess.Popen, sig: int) -> tuple[int, str]:
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(
            f"the runner did not stop within 120 s of signal {sig}:\n{err}"
        ) from None
    return proc.returncode, out + err


# Where the runner is when the signal arrives: a predicate over the results dir, on a run of
# two scenarios (gevent.pywsgi, then Gunicorn gevent).
POINTS = {
    "while the first scenario comes up": lambda rd: bool(containers("async-gevent-pywsgi-")),
    "during the load": lambda rd: bool(containers("flask-playground-load-")),
    "after the first scenario finished": lambda rd: len(finished_entries(rd)) >= 1,
}


@pytest.mark.parametrize(
    "point,sig",
    [
        ("while the first scenario comes up", signal.SIGINT),
        ("during the load", signal.SIGTERM),
        ("after the first scenario finished", signal.SIGINT),
        ("after the first scenario finished", signal.SIGTERM),
    ],
)
def test_interrupted_run_leaves_nothing_and_keeps_finished_results(tmp_path, point, sig):
    before = snapshot()
    proc = start(tmp_path, "run", "gevent-pywsgi", "gunicorn-gevent", "--no-calibration", *LOAD)
    try:
        wait_until(
            lambda: POINTS[point](tmp_path) or proc.poll() is not None, timeout=240, what=point
        )
        assert proc.poll() is None, "the run ended before it could be interrupted"
        kept = finished_entries(tmp_path)
        code, output = stop(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, output[-3000:]
    assert "interrupted" in output and "Traceback" not in output, output[-3000:]
    assert_nothing_left(before)
    # Every result finished before the signal is still there, byte for byte the same entry.
    folder = run_dir(tmp_path)
    runstore.load(folder)  # still a whole, valid file
    data = json.loads((folder / "results.json").read_text())
    assert data["scenarios"][: len(kept)] == kept
    assert all(not e.get("error") for e in kept)
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".results.json")]
    if point == "after the first scenario finished":
        assert [e["name"] for e in kept] == ["gevent-pywsgi"] and kept[0]["valid"]


def test_interrupted_fault_run_restores_nothing_but_removes_everything(tmp_path):
    """SIGTERM while slow_api is stopped on purpose: down still removes it all."""
    before = snapshot()
    proc = start(
        tmp_path,
        "faults",
        "gevent-pywsgi",
        "--fault",
        "upstream-outage",
        "-c",
        "10",
        "--baseline",
        "2",
        "--fault-seconds",
        "30",
        "--recovery",
        "5",
    )
    try:
        wait_until(
            lambda: (
                "exited"
                in sh(
                    "docker",
                    "ps",
                    "-a",
                    "--filter",
                    "name=async-gevent-pywsgi-slow_api-1",
                    "--format",
                    "{{.State}}",
                ).stdout
                or proc.poll() is not None
            ),
            timeout=240,
            what="slow_api stopped by the fault",
        )
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        code, output = stop(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, output[-3000:]
    assert_nothing_left(before)
    faults_json = next(tmp_path.glob("*-faults/faults.json"))
    data = json.loads(faults_json.read_text())  # whole, not half-written
    assert data["finished_at"] is None and data["runs"] == []
    assert (faults_json.parent / "faults.md").exists()


def test_a_second_runner_refuses_instead_of_fighting_over_ports(tmp_path):
    first = start(tmp_path / "a", "run", "gevent-pywsgi", "--no-calibration", *LOAD)
    try:
        wait_until(
            lambda: bool(containers("async-gevent-pywsgi-")) or first.poll() is not None,
            timeout=120,
            what="the first run to bring its scenario up",
        )
        # Even with a results directory of its own: the ports are the machine's.
        started = time.monotonic()
        second = subprocess.run(
            [
                PLAYGROUND,
                "run",
                "gunicorn-gevent",
                "--no-build",
                "--no-calibration",
                "--results-dir",
                str(tmp_path / "b"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"another playground run is in progress (pid {first.pid})" in second.stderr
        assert time.monotonic() - started < 30
        assert not containers("async-gevent-gunicorn-"), "the second runner started something"
    finally:
        if first.poll() is None:
            stop(first, signal.SIGINT)


@pytest.fixture()
def never_healthy(monkeypatch: pytest.MonkeyPatch) -> Target:
    target = Target(
        name="never-healthy",
        title="a scenario that never becomes healthy",
        compose_file="tests/data/never-healthy.yml",
        service="flask_app",
        port=3000,
        host_port=None,
        requests=20,
        concurrency=5,
    )
    # For this test only: the registry lists the playground's own targets.
    monkeypatch.setitem(REGISTRY, target.name, target)
    return target


def test_a_scenario_that_never_gets_healthy_fails_with_its_logs_and_the_run_goes_on(
    tmp_path, never_healthy, capsys
):
    before = snapshot()
    old_sigterm = signal.getsignal(signal.SIGTERM)
    started = time.monotonic()
    try:
        code = cli.main(
            [
                "run",
                "never-healthy",
                "gevent-pywsgi",
                "--no-build",
                "--no-calibration",
                "--wait-timeout",
                "15",
                *LOAD,
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ]
        )
    finally:
        signal.signal(signal.SIGTERM, old_sigterm)
    elapsed = time.monotonic() - started
    _out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    # Bounded: 15 s of waiting, teardown, then the next scenario (~20 s), not 120 s + more.
    assert elapsed < 120, elapsed
    assert "did not become healthy within 15 s" in err
    assert "--- last log lines ---" in err and "never-healthy: started, will never answer" in err
    run = runstore.load(tmp_path / "latest")
    by_name = {e.name: e for e in run.scenarios}
    assert "did not become healthy within 15 s" in (by_name["never-healthy"].error or "")
    assert by_name["never-healthy"].valid is False
    assert by_name["gevent-pywsgi"].error is None and by_name["gevent-pywsgi"].valid
    assert run.finished_at
    assert_nothing_left(before)
    assert not any(leftovers("flask-playground-never-healthy").values())


def test_results_file_is_never_half_written(tmp_path):
    """Writes go to a temporary file renamed over the old one: a writer killed at any moment
    leaves either the old file or the new one, never a mix."""
    target = tmp_path / "results.json"
    runstore.write_json_atomic(target, {"n": 0, "pad": ""})
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys; from pathlib import Path; from playground.core.runstore import write_json_atomic\n"
                "for i in range(1, 10**6): write_json_atomic(Path(sys.argv[1]), "
                "{'n': i, 'pad': 'x' * 200000})"
            ),
            str(target),
        ],
        env={**os.environ},
    )
    try:
        for _ in range(40):
            time.sleep(0.05)
            data = json.loads(target.read_text())  # always a whole document
            assert data["pad"] in ("", "x" * 200000)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
    assert json.loads(target.read_text())["n"] >= 1

"""`playground run` for real on two scenarios with a tiny load: the files it writes and the
plausibility of its figures (requests/s close to concurrency / delay)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core.results import Run
from tests.integration.conftest import ROOT, leftovers, wait_until

pytestmark = pytest.mark.integration

PLAYGROUND = str(Path(sys.executable).with_name("playground"))
N, C, DELAY = 200, 25, 0.5  # ideal: 50 rps; 8 rounds, enough for a steady figure


def playground(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PLAYGROUND, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    results_dir = tmp_path_factory.mktemp("results")
    proc = playground(
        "run",
        "devserver-threads",
        "gevent-pywsgi",
        "-n",
        str(N),
        "-c",
        str(C),
        "--delay",
        str(DELAY),
        "--no-build",
        "--results-dir",
        str(results_dir),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return results_dir, proc


def test_writes_results_report_and_charts(run):
    results_dir, _ = run
    latest = results_dir / "latest"
    assert latest.is_symlink()
    for name in ("results.json", "report.md", "report.html", "rps.png", "threads.png"):
        assert (latest / name).stat().st_size > 0, name
    data = json.loads((latest / "results.json").read_text())
    assert data["finished_at"] and data["environment"]["cpu_count"]
    assert data["environment"]["images"]["flask-playground/flask_app"].startswith("sha256:")
    assert [e["name"] for e in data["scenarios"]] == ["devserver-threads", "gevent-pywsgi"]
    run = Run.from_json(data)  # every entry fits the model
    assert run.to_json() == data
    for entry in [data["calibration"], *data["scenarios"]]:
        assert (latest / "raw" / f"{entry['name']}-c{C}-r1.txt").exists()


def test_figures_are_plausible(run):
    results_dir, _ = run
    data = json.loads((results_dir / "latest" / "results.json").read_text())
    for entry in [data["calibration"], *data["scenarios"]]:
        assert entry["valid"], entry["invalid_reasons"]
        assert entry["failed"] == 0 and entry["non_2xx"] == 0
        assert entry["ideal_rps"] == pytest.approx(C / DELAY)
        # Close to c/delay, with a generous margin for a busy 2-core machine.
        assert 0.6 * C / DELAY <= entry["steady_rps"] <= 1.05 * C / DELAY, entry["steady_rps"]
        assert entry["rps"] <= entry["ab_cap_rps"] * 1.05
    by_name = {e["name"]: e for e in data["scenarios"]}
    assert by_name["devserver-threads"]["threads_peak"] >= C * 0.6
    assert by_name["gevent-pywsgi"]["threads_peak"] <= 25
    assert by_name["gevent-pywsgi"]["processes"] == 1


def test_prints_the_commands_a_reader_can_repeat(run):
    _, proc = run
    assert "docker compose -f sync-devserver.yml up -d --wait" in proc.stdout
    assert f"ab -r -n {N} -c {C}" in proc.stdout
    assert "docker compose -f sync-devserver.yml down" in proc.stdout


def test_leaves_nothing_behind(run):
    for project in ("sync-devserver", "async-gevent-pywsgi"):
        assert not any(leftovers(project).values())
    names = subprocess.run(
        ["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True
    ).stdout
    assert "flask-playground-load-" not in names


def test_resume_of_a_finished_run_measures_nothing_again(run):
    results_dir, _ = run
    before = json.loads((results_dir / "latest" / "results.json").read_text())
    proc = playground(
        "run",
        "devserver-threads",
        "gevent-pywsgi",
        "-n",
        str(N),
        "-c",
        str(C),
        "--delay",
        str(DELAY),
        "--no-build",
        "--quiet",
        "--results-dir",
        str(results_dir),
        "--resume",
        "latest",
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    after = json.loads((results_dir / "latest" / "results.json").read_text())
    assert [e["steady_rps"] for e in after["scenarios"]] == [
        e["steady_rps"] for e in before["scenarios"]
    ]


def test_unknown_scenario_is_a_clear_error(tmp_path):
    proc = playground("run", "no-such-scenario", "--no-build", "--results-dir", str(tmp_path))
    assert proc.returncode == 2
    assert "unknown scenario 'no-such-scenario'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_from_host_loads_the_published_port(tmp_path):
    proc = playground(
        "run",
        "gevent-pywsgi",
        "-n",
        str(N),
        "-c",
        str(C),
        "--delay",
        str(DELAY),
        "--from-host",
        "--no-calibration",
        "--no-build",
        "--results-dir",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"$ ab -r -n {N} -c {C} -s 30 'http://127.0.0.1:3000/?delay={DELAY:g}'" in proc.stdout
    data = json.loads((tmp_path / "latest" / "results.json").read_text())
    entry = data["scenarios"][0]
    assert data["settings"]["from_host"] is True
    assert entry["valid"] and 0.6 * C / DELAY <= entry["steady_rps"] <= 1.05 * C / DELAY


def test_a_port_in_use_is_named(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind(("127.0.0.1", 3000))
        busy.listen(1)
        proc = playground(
            "run", "gevent-pywsgi", "--no-build", "--no-calibration", "--results-dir", str(tmp_path)
        )
    # The run goes on past a scenario it cannot bring up (exit 0), its entry naming why.
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "port 3000 on 127.0.0.1 is already in use" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (entry,) = json.loads((tmp_path / "latest" / "results.json").read_text())["scenarios"]
    assert "port 3000 on 127.0.0.1 is already in use" in entry["error"], entry["error"]
    assert not any(leftovers("async-gevent-pywsgi").values())


def test_docker_not_running_is_a_clear_error(tmp_path):
    import os

    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    proc = subprocess.run(
        [PLAYGROUND, "run", "--no-build", "--results-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Docker is not running or not reachable" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_failing_image_build_shows_its_last_lines(tmp_path):
    import os

    env = {**os.environ, "PYTHON_IMAGE": "flask-playground-missing/python:0"}
    proc = subprocess.run(
        [PLAYGROUND, "run", "gevent-pywsgi", "--no-calibration", "--results-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 2
    assert "image build failed" in proc.stderr
    assert "flask-playground-missing/python" in proc.stderr  # the build's own words
    assert "Traceback" not in proc.stderr


def test_wrk_as_the_load_tool(tmp_path):
    # The service is `flask_app`: wrk refuses host names with an underscore, so the runner
    # must hand it the container's address instead.
    proc = playground(
        "run",
        "gevent-pywsgi",
        "-c",
        str(C),
        "--delay",
        str(DELAY),
        "--tool",
        "wrk",
        "--duration",
        "4",
        "--no-calibration",
        "--no-build",
        "--results-dir",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    entry = json.loads((tmp_path / "latest" / "results.json").read_text())["scenarios"][0]
    assert entry["tool"] == "wrk" and entry["ab_cap_rps"] is None
    assert entry["valid"], entry["invalid_reasons"]
    assert 0.6 * C / DELAY <= entry["steady_rps"] <= 1.1 * C / DELAY, entry["steady_rps"]


def cpus_allowed(container: str) -> str | None:
    """The CPUs the kernel lets `container`'s main process run on (its cpuset), or None."""
    pid = subprocess.run(
        ["docker", "inspect", "--format", "{{.State.Pid}}", container],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if pid in ("", "0"):
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return None


def test_pinned_cpus_move_the_app_and_the_load_apart(tmp_path):
    """--pin-cpus: `docker update` puts flask_app on CPU 1 and slow_api on CPU 0 (a refused
    update would fail the run), the load generator runs on CPU 0, and the run says so; the
    kernel's own cpusets of the two containers' processes show it while the run goes on."""
    pinned = {"flask_app": "1", "slow_api": "0"}
    seen: dict[str, str | None] = {}

    def all_pinned() -> bool:
        for service in pinned:
            seen[service] = cpus_allowed(f"async-gevent-pywsgi-{service}-1")
        return seen == pinned

    argv = [PLAYGROUND, "run", "gevent-pywsgi", "-n", str(N), "-c", str(C), "--delay"]
    argv += [str(DELAY), "--pin-cpus", "--no-calibration", "--no-build"]
    argv += ["--results-dir", str(tmp_path / "results")]
    with (tmp_path / "out").open("w+") as out, (tmp_path / "err").open("w+") as err:
        running = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=err, text=True)
        try:
            wait_until(all_pinned, timeout=180, what="flask_app on CPU 1 and slow_api on CPU 0")
            code = running.wait(timeout=600)
        finally:
            if running.poll() is None:
                running.kill()
                running.wait()
    stdout, stderr = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert code == 0, stdout[-3000:] + stderr[-3000:]
    updates = [line for line in stdout.splitlines() if "docker update --cpuset-cpus" in line]
    assert sorted(line.split()[4] for line in updates) == ["0", "1"], updates
    assert "docker run --rm --network async-gevent-pywsgi_default --cpuset-cpus 0" in stdout
    data = json.loads((tmp_path / "results" / "latest" / "results.json").read_text())
    assert data["settings"]["pin_cpus"].startswith("app services on CPU 1")
    entry = data["scenarios"][0]
    assert entry["valid"] and 0.6 * C / DELAY <= entry["steady_rps"] <= 1.05 * C / DELAY
    assert "docker update --cpuset-cpus 1" in entry["commands"]["pin"]

"""The 2026 contenders (contenders/), brought up for real: the shape each one teaches, with
generous margins, each able to fail if the server behaves the other way.

K requests of DELAY seconds sent at once take about DELAY when served concurrently (asserted:
under half of K x DELAY, and under 1.8 x DELAY where the point is a pool bigger than a
default) and about K x DELAY one at a time (asserted: at least 0.8 of that).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import ROOT, concurrent_get, get, sh

pytestmark = pytest.mark.integration

BODY = "Hi there! slow api response"
K, DELAY = 20, 1.0  # 20 s one at a time, ~1 s concurrently
FILES = [
    "contenders/gunicorn-gthread.yml",
    "contenders/granian-wsgi.yml",
    "contenders/uvicorn-wsgi.yml",
    "contenders/flask-async-views.yml",
    "contenders/quart-hypercorn.yml",
    "contenders/freethreaded-gunicorn.yml",
]


def assert_concurrent(
    port: int, *, k: int = K, delay: float = DELAY, within: float | None = None
) -> float:
    elapsed, statuses = concurrent_get(port, k=k, delay=delay)
    assert statuses == [200] * k
    limit = within if within is not None else k * delay / 2
    assert elapsed < limit, f"{k} requests of {delay} s took {elapsed:.2f} s: not concurrent"
    return elapsed


def assert_serialised(port: int, *, k: int, delay: float) -> None:
    elapsed, statuses = concurrent_get(port, k=k, delay=delay)
    assert statuses == [200] * k
    assert elapsed >= 0.8 * k * delay, (
        f"{k} requests of {delay} s took {elapsed:.2f} s: not serialised"
    )


def assert_same_answers(port: int) -> None:
    """The WSGI app's answers: its body, and a 400 with the reason for a bad delay."""
    status, body = get(port)
    assert (status, body.rstrip("\n")) == (200, BODY), (port, status, body)
    for query in ("delay=abc", "delay=-1", "delay=61", "delay=1&delay=2"):
        status, body = get(port, query)
        assert status == 400 and body.startswith("delay "), (port, query, status, body)


@pytest.mark.parametrize("compose_file", FILES)
def test_compose_conventions(compose_file):
    text = open(compose_file).read()
    assert not any(line.startswith("version:") for line in text.splitlines())
    assert "\nname: contender-" in text
    config = json.loads(
        sh("docker", "compose", "-f", compose_file, "config", "--format", "json").stdout
    )
    for name, svc in config["services"].items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no health check"
        if name == "slow_api":
            continue
        assert {p["host_ip"] for p in svc["ports"]} == {"127.0.0.1"}, name
        assert svc["depends_on"]["slow_api"]["condition"] == "service_started", name
        assert svc.get("stop_signal") == "SIGINT", name
        user = sh(
            "docker", "image", "inspect", "--format", "{{.Config.User}}", svc["image"], check=False
        ).stdout.strip()
        assert user and user not in ("root", "0", "0:0"), (name, svc["image"], user)


class TestGunicornGthread:
    compose_file = "contenders/gunicorn-gthread.yml"

    @pytest.mark.parametrize("port", [3000, 3001])
    def test_concurrent_with_the_same_answers(self, up, port):
        assert_same_answers(port)
        assert_concurrent(port)

    def test_one_process_grows_threads_with_load(self, up):
        threads = up.threads_during(
            "gthread_1x200", url="http://127.0.0.1:3001/?delay=1", n=200, c=100
        )
        assert threads["peak"] >= threads["before"] + 50, threads


class TestGranian:
    compose_file = "contenders/granian-wsgi.yml"

    def test_concurrent_with_the_same_answers(self, up):
        assert_same_answers(3000)
        assert_concurrent(3000)

    def test_blocking_threads_grow_with_load(self, up):
        # On WSGI a request in flight holds one of Granian's blocking threads.
        threads = up.threads_during("granian", url="http://127.0.0.1:3000/?delay=1", n=200, c=100)
        assert threads["peak"] >= threads["before"] + 50, threads


class TestUvicornAdapters:
    compose_file = "contenders/uvicorn-wsgi.yml"

    def test_a2wsgi_pool_holds_more_than_its_default_ten(self, up):
        assert_same_answers(3000)
        # With a2wsgi's default 10 threads, 20 requests would take two delays.
        assert_concurrent(3000, within=1.8 * DELAY)

    def test_wsgitoasgi_serialises_the_wsgi_app(self, up):
        assert_same_answers(3001)
        assert_serialised(3001, k=5, delay=0.5)


class TestFlaskAsyncViews:
    compose_file = "contenders/flask-async-views.yml"

    def test_concurrent_with_the_same_answers(self, up):
        assert_same_answers(3000)
        assert_concurrent(3000)

    def test_each_request_still_holds_a_thread(self, up):
        threads = up.threads_during(
            "async_views", url="http://127.0.0.1:3000/?delay=1", n=200, c=100
        )
        assert threads["peak"] >= threads["before"] + 50, threads


class TestQuart:
    compose_file = "contenders/quart-hypercorn.yml"

    @pytest.mark.parametrize("port", [3000, 3001])
    def test_concurrent_with_the_same_answers(self, up, port):
        assert_same_answers(port)
        assert_concurrent(port)

    def test_threads_stay_flat_under_load(self, up):
        threads = up.threads_during(
            "quart_unlimited", url="http://127.0.0.1:3001/?delay=1", n=200, c=100
        )
        assert threads["peak"] <= threads["before"] + 10, threads
        assert threads["processes"] == 1, threads  # Hypercorn's own process serves (workers=0)

    def test_the_pool_cap_of_100_is_a_measured_limit(self, up):
        # 120 at once: the capped session serves 100, then the other 20 (two delays); without
        # the cap all 120 go out together (one delay).
        capped, _ = concurrent_get(3000, k=120, delay=DELAY)
        uncapped = assert_concurrent(3001, k=120, within=1.8 * DELAY)
        assert capped >= 1.8 * DELAY, f"120 requests through a 100-connection pool: {capped:.2f} s"
        assert capped > uncapped + 0.5 * DELAY, (capped, uncapped)


class TestFreeThreaded:
    compose_file = "contenders/freethreaded-gunicorn.yml"

    @pytest.mark.parametrize("service", ["nogil_4x50", "nogil_1x200"])
    def test_the_gil_is_off_in_the_container(self, up, service):
        code = (
            "import sys, sysconfig, freethreaded; "
            "print(sysconfig.get_config_var('Py_GIL_DISABLED'), sys._is_gil_enabled())"
        )
        proc = up.exec(service, "python", "-c", code)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["1", "False"], proc.stdout + proc.stderr

    def test_the_app_refuses_to_start_with_the_gil_on(self, up):
        proc = up.exec("nogil_1x200", "env", "PYTHON_GIL=1", "python", "-c", "import freethreaded")
        assert proc.returncode != 0 and "refusing to serve: the GIL is enabled" in proc.stderr

    @pytest.mark.parametrize("port", [3000, 3001])
    def test_concurrent_with_the_same_answers(self, up, port):
        assert_same_answers(port)
        assert_concurrent(port)


def test_the_report_compares_them_in_a_section_of_its_own(tmp_path):
    """`playground run` on two contenders at their default loads (about a minute): the report
    itself carries the table, with the serialising adapter named as such, and its chart; no
    file beside it."""
    playground = Path(sys.executable).with_name("playground")
    proc = subprocess.run(
        [
            str(playground),
            "run",
            "uvicorn-wsgitoasgi",
            "gthread-1x200",
            "--no-build",
            "--no-calibration",
            "-q",
            "--results-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = tmp_path / "latest"
    report = (run_dir / "report.md").read_text()
    start = report.index("## 2026 contenders: requests per MB")
    section = report[start : report.index("\n## ", start + 1)]
    rows = {
        ln.split("|")[1].strip(): ln.split("|")[-2].strip()
        for ln in section.splitlines()
        if ln.startswith("| ") and "---" not in ln
    }
    assert rows == {
        "mode": "verdict",
        "uvicorn-wsgitoasgi": "serialised",
        "gthread-1x200": "concurrent",
    }
    assert "](contenders.png)" in section and (run_dir / "contenders.png").stat().st_size
    assert not (run_dir / "contenders.md").exists()

"""The companion demos (demos/), built and brought up for real: the concurrency shape each one
teaches, asserted with generous margins, and the sequential cases shown to be sequential (each
shape test fails if the server behaves the other way).

K requests of DELAY seconds sent at once take about K x DELAY one at a time (asserted: at
least 0.8 of that) and about DELAY concurrently (asserted: under half of K x DELAY).
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from playground.core.demos import DEMO_FILES
from playground.core.tools.wrk import WrkTool
from tests.integration.conftest import concurrent_get, get, sh

pytestmark = pytest.mark.integration

SLEPT = "Hi there! slept 0 s with time.sleep\n"
SLEPT_ASYNCIO = "Hi there! slept 0 s with asyncio.sleep\n"
K, DELAY = 6, 0.5  # 3 s one at a time, ~0.5 s concurrently
FILES = list(DEMO_FILES)


def assert_concurrent(port: int, *, k: int = K, delay: float = DELAY) -> None:
    elapsed, statuses = concurrent_get(port, k=k, delay=delay)
    assert statuses == [200] * k
    assert elapsed < k * delay / 2, (
        f"{k} requests of {delay} s took {elapsed:.2f} s: not concurrent"
    )


def assert_serialised(port: int, *, k: int = K, delay: float = DELAY) -> None:
    elapsed, statuses = concurrent_get(port, k=k, delay=delay)
    assert statuses == [200] * k
    assert elapsed >= 0.8 * k * delay, (
        f"{k} requests of {delay} s took {elapsed:.2f} s: not serialised"
    )


def assert_refuses_bad_input(port: int) -> None:
    for query in ("delay=abc", "delay=-1", "delay=61", "delay=1&delay=2"):
        status, body = get(port, query)
        assert status == 400 and body.startswith("delay "), (query, status, body)


# ---- the compose files themselves ----------------------------------------------------------


@pytest.mark.parametrize("compose_file", FILES)
def test_compose_conventions(compose_file):
    text = open(compose_file).read()
    assert not any(line.startswith("version:") for line in text.splitlines())
    assert "\nname: demo-" in text
    config = json.loads(
        sh("docker", "compose", "-f", compose_file, "config", "--format", "json").stdout
    )
    for name, svc in config["services"].items():
        assert {p["host_ip"] for p in svc["ports"]} == {"127.0.0.1"}, name
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no health check"
        assert svc.get("stop_signal") == "SIGINT", name
        user = sh(
            "docker", "image", "inspect", "--format", "{{.Config.User}}", svc["image"], check=False
        ).stdout.strip()
        assert user and user not in ("root", "0", "0:0"), (name, svc["image"], user)
        assert not svc.get("ulimits"), name


# ---- 1. uWSGI threads vs greenlets ---------------------------------------------------------


class TestUwsgiSleep:
    compose_file = "demos/uwsgi-sleep.yml"

    def test_exact_bodies(self, up):
        for port in range(3000, 3006):
            assert get(port) == (200, SLEPT), port
        assert_refuses_bad_input(3000)

    @pytest.mark.parametrize("port", [3000, 3001, 3002])
    def test_n10_all_concurrent(self, up, port):
        # Threads and both monkey-patch flags alike: time.sleep is cooperative by the time
        # the handler runs (looked up on the module at each call), or runs in its own thread.
        assert_concurrent(port, k=8)

    @pytest.mark.parametrize("port", [3003, 3004, 3005])
    def test_n1000_all_concurrent(self, up, port):
        assert_concurrent(port, k=50)

    def test_threads_exist_up_front_greenlets_need_none(self, up):
        url = "http://127.0.0.1:{}/?delay=0.5"
        threaded = up.threads_during("threads_10", url=url.format(3000), n=40, c=10)
        # Published: 12 uWSGI threads (master + 10 in the worker + the HTTP router) vs none.
        assert threaded["before"] >= 12, threaded
        for service, port in (("gevent_10", 3001), ("gevent_early_10", 3002)):
            green = up.threads_during(service, url=url.format(port), n=40, c=10)
            # One thread per process (master, worker, HTTP router): no thread per request.
            assert green["peak"] <= green["processes"] + 1, (service, green)
        thousand = up.threads_during("threads_1000", url=url.format(3003), n=40, c=10)
        assert thousand["before"] >= 1000, thousand


# ---- 2. Gunicorn worker classes ------------------------------------------------------------


class TestGunicornWorkers:
    compose_file = "demos/gunicorn-workers.yml"

    def test_exact_bodies(self, up):
        for port in (3000, 3001, 3002, 3003):
            assert get(port) == (200, SLEPT), port
        assert_refuses_bad_input(3001)

    def test_gevent_worker_concurrent_without_code_change(self, up):
        assert_concurrent(3000)

    def test_eventlet_worker_concurrent_even_without_the_apps_patch(self, up):
        """The published claim, "sequential unless the app calls eventlet.monkey_patch()", does
        not reproduce: Gunicorn's eventlet worker patches the standard library itself (on
        import since 24.x, in init_process in 20.x-23.x), so time.sleep is eventlet's either way.
        This test fails if that ever changes and the unpatched app serialises."""
        assert_concurrent(3001)
        # Why: importing the worker class swaps time.sleep for eventlet's.
        probe = up.exec(
            "eventlet",
            "python",
            "-W",
            "ignore",
            "-c",
            "import time; before = time.sleep; import gunicorn.workers.geventlet; "
            "print(time.sleep is before, time.sleep.__module__)",
        )
        assert probe.returncode == 0, probe.stderr
        assert probe.stdout.split() == ["False", "eventlet.greenthread"], probe.stdout

    def test_eventlet_worker_with_the_patch_concurrent(self, up):
        assert_concurrent(3002)

    def test_sync_worker_with_the_patch_still_serialised(self, up):
        assert_serialised(3003)

    def test_legacy_image_is_the_last_gunicorn_with_the_eventlet_worker(self, up):
        legacy = up.exec("eventlet", "gunicorn", "--version")
        assert legacy.returncode == 0 and "25.3.0" in legacy.stdout + legacy.stderr, legacy
        current = up.exec("gevent", "gunicorn", "--version")
        assert current.returncode == 0 and "27.0.1" in current.stdout + current.stderr, current
        gone = up.exec("gevent", "python", "-c", "import gunicorn.workers.geventlet")
        assert gone.returncode != 0 and "ModuleNotFoundError" in gone.stderr, gone.stderr


# ---- 3. Sanic: time.sleep vs await asyncio.sleep -------------------------------------------


def read_by_the_server(up, service: str, port: int) -> bool:
    """Whether `service` has read a request on its `port`: an established connection to it
    whose receive queue is empty, in the container's own /proc/net/tcp (tcp6 too). A request
    not yet read sits in the queue (or the connection in the accept queue, its bytes unread)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        lines = up.exec(service, "cat", table).stdout.splitlines()[1:]
        for fields in (line.split() for line in lines):
            local, state, queues = fields[1], fields[3], fields[4]
            if int(local.rsplit(":", 1)[1], 16) == port and state == "01":
                if int(queues.split(":")[1], 16) == 0:
                    return True
    return False


def time_a_quick_request_behind_a_slow_one(
    up, service: str, port: int, *, slow: float = 3.0
) -> float:
    """Send one request that sleeps `slow` s, then time a ?delay=0 request sent meanwhile.

    The quick one is sent once the server has read the slow one (it is then in its handler):
    sent at once, the two could arrive in one turn of the server's event loop, which may read
    the quick one first (2.7 ms on a CI run). The wait is bounded by a quarter of `slow`, so
    the quick one still goes out early in the slow one's sleep.
    """
    request = f"GET /?delay={slow} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as slow_one:
        sent = time.monotonic()
        slow_one.sendall(request.encode())
        while not read_by_the_server(up, service, port):
            assert time.monotonic() - sent < slow / 4, f"{service} did not read the slow request"
        started = time.monotonic()
        assert get(port)[0] == 200
        elapsed = time.monotonic() - started
        answer = slow_one.makefile("rb").readline()
    assert answer.split()[1:2] == [b"200"], answer
    return elapsed


class TestSanic:
    compose_file = "demos/sanic.yml"

    def test_exact_bodies(self, up):
        assert get(3000) == (200, SLEPT)
        assert get(3001) == (200, SLEPT_ASYNCIO)
        assert_refuses_bad_input(3001)

    def test_time_sleep_in_async_def_serialises(self, up):
        assert_serialised(3000)

    def test_time_sleep_blocks_the_whole_server(self, up):
        # Even a request that needs no sleep waits for the sleeping one to finish.
        assert time_a_quick_request_behind_a_slow_one(up, "sanic_blocking", 3000) >= 1.0

    def test_await_asyncio_sleep_concurrent(self, up):
        assert_concurrent(3001)
        assert time_a_quick_request_behind_a_slow_one(up, "sanic_concurrent", 3001) < 0.5


# ---- 4. wrk and the worker classes ---------------------------------------------------------

WRK_SERVERS = {
    "eventlet": 3001,
    "gevent": 3002,
    "sanic": 3003,
    "sanic-gunicorn": 3004,
    "sync": 3000,
}  # sync last: its queued requests outlive the wrk run
WRK_C, WRK_S, WRK_DELAY = 20, 3, 0.25


def wrk(up, service: str, *, delay: float, seconds: int = WRK_S):
    proc = up.in_network(
        "wrk",
        "--latency",
        "-t",
        "2",
        "-c",
        str(WRK_C),
        "-d",
        f"{seconds}s",
        "--timeout",
        "10s",
        f"http://{service}:{WRK_SERVERS[service]}/?delay={delay:g}",
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return WrkTool().parse(stdout=proc.stdout + proc.stderr, per_request=None, concurrency=WRK_C)


class TestWrkWorkers:
    compose_file = "demos/wrk-workers.yml"

    def test_exact_bodies(self, up):
        for service, port in WRK_SERVERS.items():
            assert get(port) == (200, SLEPT_ASYNCIO if "sanic" in service else SLEPT), service

    @pytest.mark.parametrize("service", list(WRK_SERVERS))
    def test_no_sleep_clean(self, up, service):
        result = wrk(up, service, delay=0, seconds=2)
        assert result.complete > 0 and result.failed == 0 and result.non_2xx == 0, result

    @pytest.mark.parametrize("service", list(WRK_SERVERS))
    def test_sleeping_shape(self, up, service):
        result = wrk(up, service, delay=WRK_DELAY)
        assert result.non_2xx == 0, result
        one_at_a_time = WRK_S / WRK_DELAY  # 12 requests in 3 s
        if service == "sync":
            assert result.complete <= one_at_a_time + 2, result
        else:
            # All 20 connections sleeping at once: ~240 requests in 3 s.
            assert result.complete >= 0.5 * WRK_C * one_at_a_time, result

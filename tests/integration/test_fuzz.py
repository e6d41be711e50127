"""Hostile input against the real containers: a property-based fuzz of the query string and
headers (fixed seed, a few hundred examples per app) and a table of malformed requests, for
slow_api (aiohttp), the Flask app under a threaded server (Gunicorn gthread) and a gevent one
(gevent.pywsgi), and the bonus app (uWSGI gevent, with and without psycogreen).

The answer must be what the `delay` rule predicts (200 or 400). A request too big for the
server may be refused by the server itself, as its documentation says: 414 URI Too Long,
431 Request Header Fields Too Large, or 400 (aiohttp and nginx use 400 for an oversized
header). Never a 500, never silence, and afterwards the server still answers and no container
restarted and no server process died. The files come up with MAX_DELAY=0.2, so every delay
the rule accepts is answered within 0.2 s (the rule is the same, only its limit is lower).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings

from playground.core.compose import Docker
from playground.faults.containers import ServerState, container_checks, server_state
from tests.integration.conftest import ROOT, leftovers, project_of, sh
from tests.strategies import (
    EXCHANGE_SRC,
    FUZZ_MAX_DELAY,
    allowed_statuses,
    build_request,
    exchange,
    expected_status,
    header_lists,
    query_pairs,
)

pytestmark = pytest.mark.integration

FUZZ = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
PLAIN = b"GET /?delay=0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
# Delays so small that `f"{d:g}"` writes them with an exponent, which slow_api refuses: the
# apps passed them on that way and answered 502 (found by this fuzz; the bonus halves it).
TINY = example(pairs=[("delay", "0.00001", False)], headers=[])


class Live:
    """A compose file brought up with MAX_DELAY=0.2, and what its containers looked like."""

    def __init__(self, compose_file: str) -> None:
        self.compose_file = compose_file
        self.docker = Docker(root=ROOT, env={**os.environ, "MAX_DELAY": str(FUZZ_MAX_DELAY)})
        self.before: dict[str, ServerState] = {}

    def states(self) -> dict[str, ServerState]:
        return {
            s: server_state(docker=self.docker, compose_file=self.compose_file, service=s)
            for s in self.docker.services(self.compose_file)
        }

    def assert_unharmed(self, ports: tuple[int, ...]) -> None:
        for port in ports:
            assert exchange(PLAIN, "127.0.0.1", port, 10) == (200, None), port
        checks = container_checks(before=self.before, after=self.states())
        for service, check in checks.items():
            assert not check.problems, (service, check)


@pytest.fixture(scope="class")
def live(request) -> Iterator[Live]:
    compose_file = request.cls.compose_file
    project = project_of(compose_file)
    env = {**os.environ, "MAX_DELAY": str(FUZZ_MAX_DELAY)}
    proc = subprocess.run(
        ["docker", "compose", "-f", compose_file, "up", "-d", "--wait", "--wait-timeout", "180"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    try:
        assert proc.returncode == 0, proc.stderr[-3000:]
        up = Live(compose_file)
        up.before = up.states()
        yield up
        # After everything the class sent, in whatever order its tests ran: the server still
        # answers, and nothing crashed or restarted (a failure here is the class's last test's).
        up.assert_unharmed(request.cls.ports)
    finally:
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
    assert not any(leftovers(project).values())


class Relay:
    """Runs the fuzz's exchange() inside a container of the network, to reach slow_api, which
    is not published: one request per line in, one answer per line out."""

    LOOP = (
        EXCHANGE_SRC
        + r"""
import base64, json, sys
for line in sys.stdin:
    req = json.loads(line)
    status, error = exchange(base64.b64decode(req["raw"]), req["host"], req["port"], 10)
    print(json.dumps([status, error]), flush=True)
"""
    )

    def __init__(self, container: str) -> None:
        self.proc = subprocess.Popen(
            ["docker", "exec", "-i", container, "python", "-u", "-c", self.LOOP],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def exchange(self, raw: bytes, host: str, port: int) -> tuple[int | None, str | None]:
        self.proc.stdin.write(
            json.dumps({"raw": base64.b64encode(raw).decode(), "host": host, "port": port}) + "\n"
        )
        self.proc.stdin.flush()
        status, error = json.loads(self.proc.stdout.readline())
        return status, error

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def check(send, host: str, pairs, headers) -> None:
    raw = build_request(pairs=pairs, headers=headers, host=host)
    expected = expected_status(pairs)
    status, error = send(raw)
    assert error is None, f"no answer ({error}) to {raw[:300]!r}"
    assert status in allowed_statuses(raw, expected), (status, expected, raw[:300])


# Malformed requests no client library would send. Allowed answers: what the servers document
# for them; `closed` (the connection closed without an answer) only where noted.
HOSTILE = {
    "raw UTF-8 in the URL": ("GET /?delay=0.1\u00e9 HTTP/1.1\r\nHost: x\r\n".encode(), {400}),
    "control character": (b"GET /?delay=\x01 HTTP/1.1\r\nHost: x\r\n", {400}),
    "NUL byte": (b"GET /?delay=0\x00 HTTP/1.1\r\nHost: x\r\n", {400}),
    "bad percent escape": (b"GET /?delay=%ZZ HTTP/1.1\r\nHost: x\r\n", {400}),
    "percent-encoded non-UTF-8": (b"GET /?delay=%FF HTTP/1.1\r\nHost: x\r\n", {400}),
    "space in the URL": (b"GET /?delay=0 1 HTTP/1.1\r\nHost: x\r\n", {400}),
    "space in a header name": (b"GET /?delay=0 HTTP/1.1\r\nHost: x\r\nX A: b\r\n", {200, 400}),
    "absolute URI": (b"GET http://x/?delay=0 HTTP/1.1\r\nHost: x\r\n", {200, 404}),
    "HTTP/1.0 without Host": (b"GET /?delay=0 HTTP/1.0\r\n", {200}),
    "20 KB query": (
        b"GET /?delay=0&x=" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n",
        {200, 400, 414},
    ),
    "70 KB query": (b"GET /?delay=0&x=" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n", {400, 414}),
    "10,000 delay parameters": (
        b"GET /?" + b"delay=0&" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n",
        {400, 414},
    ),
    "10 KB header": (
        b"GET /?delay=0 HTTP/1.1\r\nHost: x\r\nX-A: " + b"b" * 10_000 + b"\r\n",
        {200, 400, 431},
    ),
    "200 headers": (
        b"GET /?delay=0 HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: b\r\n" % i for i in range(200)),
        {200, 400, 431},
    ),
}
# uWSGI closes the connection without an answer when a request exceeds its 64 KB buffer
# (buffer-size, the largest uwsgi packet) or its table of request variables (~100 headers);
# it logs "invalid request block size". No other server here does that.
UWSGI_CLOSES = {"70 KB query", "10,000 delay parameters", "200 headers"}
# uWSGI's HTTP parser takes everything after the URL as the protocol and echoes it: to
# `GET /?delay=0 1 HTTP/1.1` it answers `1 HTTP/1.1 200 OK`. A quirk, not a crash.
UWSGI_GARBLES = {"space in the URL"}


def send_hostile(port: int, case: str, *, server: str) -> None:
    raw, allowed = HOSTILE[case]
    status, error = exchange(raw + b"Connection: close\r\n\r\n", "127.0.0.1", port, 15)
    if server == "uwsgi" and case in UWSGI_CLOSES and error == "closed":
        return
    if server == "uwsgi" and case in UWSGI_GARBLES and (error or "").startswith("garbled: "):
        return
    assert error is None, f"{case}: no answer ({error})"
    assert status in allowed, f"{case}: {status}"


class FuzzedApp:
    """Every app's published ports: fuzzed query strings and headers, hand-made malformed
    requests on the last port, and afterwards no crash, restart or lost process."""

    ports: tuple[int, ...] = (3000,)
    server: str

    def fuzz(self, pairs, headers) -> None:
        # Each class declares its own @given test calling this: hypothesis refuses one
        # @given method run from several classes.
        for port in self.ports:
            check(
                lambda raw, port=port: exchange(raw, "127.0.0.1", port, 10),
                f"127.0.0.1:{port}",
                pairs,
                headers,
            )

    @pytest.mark.parametrize("case", HOSTILE)
    def test_malformed(self, live, case):
        send_hostile(self.ports[-1], case, server=self.server)


class TestFuzzThreaded(FuzzedApp):
    """Gunicorn gthread (4 x 50 threads) in front of the Flask app, and slow_api behind it."""

    compose_file = "sync-gunicorn.yml"
    server = "gunicorn"

    @FUZZ
    @given(pairs=query_pairs, headers=header_lists)
    @TINY
    def test_app(self, live, pairs, headers):
        self.fuzz(pairs, headers)

    def test_slow_api(self, live):
        relay = Relay(
            sh(
                "docker", "compose", "-f", self.compose_file, "ps", "--quiet", "flask_app_gunicorn"
            ).stdout.strip()
        )

        @FUZZ
        @given(pairs=query_pairs, headers=header_lists)
        @TINY
        def fuzz(pairs, headers):
            check(
                lambda raw: relay.exchange(raw, "slow_api", 4000), "slow_api:4000", pairs, headers
            )

        try:
            fuzz()
            for case, (raw, allowed) in HOSTILE.items():
                status, error = relay.exchange(raw + b"Connection: close\r\n\r\n", "slow_api", 4000)
                assert error is None and status in allowed | {400}, (case, status, error)
        finally:
            relay.close()


class TestFuzzGevent(FuzzedApp):
    """gevent.pywsgi: one process, a greenlet per request."""

    compose_file = "async-gevent-pywsgi.yml"
    server = "pywsgi"

    @FUZZ
    @given(pairs=query_pairs, headers=header_lists)
    @TINY
    def test_app(self, live, pairs, headers):
        self.fuzz(pairs, headers)


class TestFuzzBonus(FuzzedApp):
    """The bonus app on uWSGI's gevent loop, without (3000) and with (3001) psycogreen."""

    compose_file = "bonus-psycopg2-gevent.yml"
    ports = (3000, 3001)
    server = "uwsgi"

    @FUZZ
    @given(pairs=query_pairs, headers=header_lists)
    @TINY
    def test_app(self, live, pairs, headers):
        self.fuzz(pairs, headers)

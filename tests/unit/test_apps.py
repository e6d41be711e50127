"""The three programs with their own test clients, against real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from playground.core.scenarios import BONUS_BODY_PREFIX, REGISTRY
from tests.conftest import ROOT, load_module
from tests.unit.conftest import free_port, serve_slow_api

import querydelay

APP_FOLDERS = ("flask_app", "psycopg2", "slow_api", "common", "demos")
BAD_DELAYS = [
    "abc",
    "-1",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e3",
    "1_0",
    "61",
    "1e400",
    "0x10",
    " 1",
    "１",
    "",
    "1.2.3",
    "9" * 40,
]


@pytest.fixture(scope="module")
def slow_api_module():
    return load_module("slow_api_app", "slow_api/app.py")


@pytest.fixture(scope="module")
def upstream() -> Iterator[int]:
    with serve_slow_api() as port:
        yield port


@pytest.fixture(scope="module")
def flask_module():
    return load_module("flask_app_app", "flask_app/app.py")


@pytest.fixture(scope="module")
def bonus_module():
    return load_module("bonus_app", "psycopg2/bonus.py")


def point(module, monkeypatch, port: int, grace: float = 5.0) -> None:
    monkeypatch.setattr(module, "API_URL", f"http://127.0.0.1:{port}/")
    monkeypatch.setattr(module, "UPSTREAM_GRACE_S", grace)


# --- slow_api -----------------------------------------------------------------------------
async def _get(app, path: str):
    async with TestClient(TestServer(app)) as client:
        resp = await client.get(path)
        return resp.status, await resp.text()


def test_slow_api_answers_after_the_delay(slow_api_module):
    started = time.monotonic()
    status, text = asyncio.run(_get(slow_api_module.make_app(), "/?delay=0.3"))
    assert (status, text) == (200, "slow api response")
    assert time.monotonic() - started >= 0.3


def test_slow_api_waits_without_blocking(slow_api_module):
    """Ten 0.5 s requests at once finish in about 0.5 s, not 5 s."""

    async def many():
        async with TestClient(TestServer(slow_api_module.make_app())) as client:
            started = time.monotonic()
            statuses = await asyncio.gather(*(client.get("/?delay=0.5") for _ in range(10)))
            return time.monotonic() - started, [r.status for r in statuses]

    elapsed, statuses = asyncio.run(many())
    assert statuses == [200] * 10
    assert elapsed < 2.0


@pytest.mark.parametrize("raw", BAD_DELAYS)
def test_slow_api_refuses_bad_delay_with_a_reason(slow_api_module, raw):
    from urllib.parse import quote

    status, text = asyncio.run(_get(slow_api_module.make_app(), f"/?delay={quote(raw)}"))
    assert status == 400
    assert "delay" in text and text.count("\n") == 1


def test_slow_api_refuses_repeated_delay(slow_api_module):
    status, text = asyncio.run(_get(slow_api_module.make_app(), "/?delay=1&delay=2"))
    assert status == 400 and "once" in text


def test_slow_api_logs_each_answered_call_that_carries_a_request_id(slow_api_module, tmp_path):
    """A line per answered call with an id (id, arrived, answered); a call without one, or
    with a header that is no id (a space, a newline, too long), leaves no line."""
    log = tmp_path / "calls.log"

    async def calls():
        app = slow_api_module.make_app(calls_log=str(log))
        async with TestClient(TestServer(app)) as client:
            for rid in ("4f2a-9c", None, "a b", "x\ty", "z" * 65):
                headers = {} if rid is None else {"X-Request-Id": rid}
                assert (await client.get("/?delay=0.2", headers=headers)).status == 200
            assert (await client.get("/?delay=abc", headers={"X-Request-Id": "bad"})).status == 400

    asyncio.run(calls())
    (line,) = log.read_text().splitlines()
    rid, arrived, answered = line.split()
    assert rid == "4f2a-9c" and 0.2 <= float(answered) - float(arrived) < 2


# --- flask_app ----------------------------------------------------------------------------
def test_flask_app_passes_the_request_id_on_to_the_third_party(flask_module, monkeypatch, tmp_path):
    """nginx's X-Request-Id reaches slow_api's calls log unchanged, on each call; a header that
    is no id is not passed on, and the page is served all the same."""
    log = tmp_path / "calls.log"
    with serve_slow_api("unit_slow_api_calls", calls_log=str(log)) as port:
        point(flask_module, monkeypatch, port)
        client = flask_module.app.test_client()
        ok = client.get("/?delay=0.05", headers={"X-Request-Id": "0123abcd"})
        odd = client.get("/?delay=0.05", headers={"X-Request-Id": "not an id; drop table"})
    assert ok.status_code == odd.status_code == 200
    assert [line.split()[0] for line in log.read_text().splitlines()] == ["0123abcd"]


def test_flask_app_answers_with_the_upstream_text(flask_module, upstream, monkeypatch):
    point(flask_module, monkeypatch, upstream)
    resp = flask_module.app.test_client().get("/?delay=0.1")
    assert resp.status_code == 200
    assert resp.get_data(as_text=True) == "Hi there! slow api response"


def test_flask_app_default_delay_is_one_second(flask_module, upstream, monkeypatch):
    point(flask_module, monkeypatch, upstream)
    started = time.monotonic()
    resp = flask_module.app.test_client().get("/")
    assert resp.status_code == 200
    assert 0.9 <= time.monotonic() - started < 5


@pytest.mark.parametrize("raw", BAD_DELAYS)
def test_flask_app_refuses_bad_delay_with_a_reason(flask_module, upstream, monkeypatch, raw):
    point(flask_module, monkeypatch, upstream)
    resp = flask_module.app.test_client().get("/", query_string={"delay": raw})
    assert resp.status_code == 400
    text = resp.get_data(as_text=True)
    assert text.startswith("delay ") and text.count("\n") == 1


def test_flask_app_refuses_repeated_delay(flask_module, upstream, monkeypatch):
    point(flask_module, monkeypatch, upstream)
    resp = flask_module.app.test_client().get("/?delay=1&delay=0")
    assert resp.status_code == 400


def test_flask_app_gives_502_when_upstream_is_unreachable(flask_module, monkeypatch):
    point(flask_module, monkeypatch, free_port())
    resp = flask_module.app.test_client().get("/?delay=0")
    assert resp.status_code == 502
    assert "slow_api unreachable" in resp.get_data(as_text=True)


def test_flask_app_gives_504_when_upstream_hangs(flask_module, silent_port, monkeypatch):
    point(flask_module, monkeypatch, silent_port, grace=0.3)
    started = time.monotonic()
    resp = flask_module.app.test_client().get("/?delay=0")
    assert resp.status_code == 504
    assert time.monotonic() - started < 3


def test_the_outbound_timeout_answers_504_long_before_the_third_party(
    flask_module, upstream, monkeypatch
):
    """A remedy: the call to a third party that takes 2 s gives up after the app's 0.3 s."""
    point(flask_module, monkeypatch, upstream)
    monkeypatch.setattr(flask_module, "UPSTREAM_TIMEOUT_S", 0.3)
    started = time.monotonic()
    resp = flask_module.app.test_client().get("/?delay=2")
    took = time.monotonic() - started
    assert resp.status_code == 504 and "within 0.3 s" in resp.get_data(as_text=True)
    assert took < 1.5
    # Without it the same call waits for the answer.
    monkeypatch.setattr(flask_module, "UPSTREAM_TIMEOUT_S", None)
    assert flask_module.app.test_client().get("/?delay=0.2").status_code == 200


def test_a_request_whose_user_has_gone_is_refused_without_calling(flask_module, monkeypatch):
    """A remedy: X-Request-Start says the request waited 5 s at nginx, its user waits 4 s:
    503 at once, and the third party (here: nothing listening) is never called."""
    point(flask_module, monkeypatch, free_port())
    monkeypatch.setattr(flask_module, "DEADLINE_S", 4.0)
    client = flask_module.app.test_client()
    late = client.get("/?delay=1", headers={"X-Request-Start": f"t={time.time() - 5:.3f}"})
    assert late.status_code == 503 and "not calling slow_api" in late.get_data(as_text=True)
    # In time, or with a header it cannot read, the app calls (and finds nobody there: 502).
    for header in (f"t={time.time() - 1:.3f}", "t=soon", "t=nan", ""):
        resp = client.get("/?delay=0", headers={"X-Request-Start": header})
        assert resp.status_code == 502, header
    monkeypatch.setattr(flask_module, "DEADLINE_S", None)
    resp = client.get("/?delay=0", headers={"X-Request-Start": f"t={time.time() - 5:.3f}"})
    assert resp.status_code == 502


def test_flask_app_unknown_route_is_a_plain_404(flask_module):
    resp = flask_module.app.test_client().get("/admin")
    assert resp.status_code == 404
    assert "GET /?delay=SECONDS" in resp.get_data(as_text=True)


# --- the bonus app ------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["abc", "-1", "nan", "1e9", "100"])
def test_bonus_refuses_bad_delay(bonus_module, raw):
    resp = bonus_module.app.test_client().get("/", query_string={"delay": raw})
    assert resp.status_code == 400


def test_bonus_gives_503_when_the_database_is_unreachable(bonus_module, upstream, monkeypatch):
    point(bonus_module, monkeypatch, upstream)
    monkeypatch.setitem(bonus_module.DSN, "host", "127.0.0.1")
    monkeypatch.setitem(bonus_module.DSN, "port", free_port())
    resp = bonus_module.app.test_client().get("/?delay=0")
    assert resp.status_code == 503
    assert resp.get_data(as_text=True).startswith("database unavailable")


def test_bonus_answers_with_the_tutorials_greeting(bonus_module, upstream, monkeypatch):
    # The database half is the integration tests' (a real PostgreSQL); here only the answer's
    # shape: the tutorial's "Hi there! " before the upstream's text, as the plain app says it.
    point(bonus_module, monkeypatch, upstream)
    monkeypatch.setattr(bonus_module, "query_db", lambda seconds: "2020-05-01T12:00:00+00:00")
    resp = bonus_module.app.test_client().get("/?delay=0")
    assert resp.status_code == 200
    body = resp.get_data(as_text=True)
    assert body == BONUS_BODY_PREFIX + "2020-05-01T12:00:00+00:00\n"
    assert REGISTRY["bonus-psycopg2"].body_ok(body)


def test_the_upstream_grace_has_one_home():
    """The 5 s grace is read from the environment in one module (common/querydelay.py), and
    both apps and the fault checks use that one value."""
    readers = sorted(
        str(path.relative_to(ROOT))
        for folder in APP_FOLDERS
        for path in (ROOT / folder).glob("*.py")
        if '"UPSTREAM_GRACE"' in path.read_text()
    )
    assert readers == ["common/querydelay.py"]
    from playground.faults.outage import UPSTREAM_GRACE_S as faults_grace

    assert faults_grace == querydelay.UPSTREAM_GRACE_S


def test_bonus_gives_502_when_upstream_is_unreachable(bonus_module, monkeypatch):
    point(bonus_module, monkeypatch, free_port())
    resp = bonus_module.app.test_client().get("/?delay=0")
    assert resp.status_code == 502

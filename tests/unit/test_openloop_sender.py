"""The open-loop generator's compiled sender (loadgen/sender: tokio and hyper) against local
servers this test controls: the same users, the same output and the same self-check as the
asyncio engine, on the same schedule."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import web

from tests.unit.conftest import free_port
from tests.unit.test_openloop import (
    resetting_server,
    rows,
    serve,
    serve_process,
    settings,
    stalling_server,
)

ROOT = Path(__file__).resolve().parents[2]
SENDER = ROOT / "loadgen" / "sender"


@pytest.fixture(scope="module")
def built() -> Path:
    """The sender built from its lock file (cargo's own cache makes a second build quick)."""
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the compiled sender is built in the loadgen image")
    proc = subprocess.run(
        ["cargo", "build", "--release", "--locked", "--quiet"],
        cwd=SENDER,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return SENDER / "target" / "release"


@pytest.fixture
def ol(built, monkeypatch):
    from tests.conftest import load_module

    monkeypatch.setenv("PATH", f"{built}:{__import__('os').environ['PATH']}")
    return load_module("openloop", "loadgen/openloop.py")


def tokio(ol, url: str, **kw):
    return settings(ol, url, engine="tokio", **kw)


def test_never_waits_for_answers_and_no_pool_caps_in_flight(ol):
    with stalling_server() as url:
        result = ol.run(tokio(ol, url, phases=(ol.Phase(rate=300, seconds=None),), timeout=1.5))
    attempts = rows(result)
    assert len(attempts) == 300
    assert {a["outcome"] for a in attempts} == {"timeout"}
    assert max(a["sent"] - a["intended"] for a in attempts) < 1.0
    assert result["peak_in_flight"] > 250
    assert result["loop"].startswith("tokio")


def test_timeout_counts_from_the_intended_send_and_users_reload(ol):
    with stalling_server() as url:
        result = ol.run(
            tokio(
                ol,
                url,
                phases=(ol.Phase(rate=5, seconds=None),),
                timeout=0.3,
                refresh_delay=0.2,
                max_attempts=3,
            )
        )
    attempts = rows(result)
    assert len(attempts) == 5 * 3
    for a in attempts:
        # Generous above: a busy machine wakes the sender late; never before the timeout.
        assert a["outcome"] == "timeout" and 0.28 < a["end"] - a["intended"] < 1.3, a
    by_visit: dict[int, list[dict]] = {}
    for a in attempts:
        by_visit.setdefault(a["visit"], []).append(a)
    for tries in by_visit.values():
        tries.sort(key=lambda a: a["attempt"])
        assert [a["attempt"] for a in tries] == [1, 2, 3]
        for prev, nxt in itertools.pairwise(tries):
            assert nxt["intended"] == pytest.approx(prev["end"] + 0.2, abs=1e-9)


def test_outcomes_ok_degraded_refused_reset_and_status(ol):
    async def failing(request):
        return web.Response(status=503, text="busy")

    async def lesser(request):
        return web.Response(text="lesser", headers={"X-Degraded": "circuit-open"})

    outcomes = {}
    with (
        resetting_server() as reset_url,
        serve(failing) as status_url,
        serve(lesser) as lesser_url,
        serve_process() as ok_url,
    ):
        for name, url in (
            ("refused", f"http://127.0.0.1:{free_port()}/"),
            ("reset", reset_url),
            ("status", status_url),
            ("degraded", lesser_url),
            ("ok", ok_url),
        ):
            result = ol.run(tokio(ol, url, phases=(ol.Phase(rate=5, seconds=None),)))
            outcomes[name] = {(a["outcome"], a["status"], a["attempt"]) for a in rows(result)}
    assert outcomes == {
        "refused": {("refused", 0, 1)},
        "reset": {("reset", 0, 1)},
        "status": {("status", 503, 1)},
        "degraded": {("degraded", 200, 1)},
        "ok": {("ok", 200, 1)},
    }


def test_the_same_schedule_and_output_as_the_asyncio_engine(ol):
    """One schedule (Poisson, seeded, users who back off), both engines: the same visits at the
    same intended times, the same columns and keys, the event once, a watch poll a second."""
    with serve_process() as url:
        base = settings(
            ol,
            url,
            duration=2.5,
            arrival="poisson",
            phases=(ol.Phase(rate=40, seconds=None),),
            refresh_backoff=2.0,
            max_attempts=3,
            events=(ol.Event(at=1.0, method="GET", url=url),),
            watches=(ol.Watch(name="status", url=url),),
        )
        py = ol.run(replace(base, engine="asyncio", processes=1))
        rs = ol.run(replace(base, engine="tokio", processes=1))
    assert py.keys() == rs.keys()
    first = [(r["visit"], r["intended"]) for r in rows(py) if r["attempt"] == 1]
    assert first == [(r["visit"], r["intended"]) for r in rows(rs) if r["attempt"] == 1]
    assert {r["outcome"] for r in rows(rs)} == {"ok"}
    assert len(rs["events"]) == 1 and 1.0 <= rs["events"][0]["sent"] < 1.5
    assert [w["name"] for w in rs["watches"]] == ["status"] * 3
    # The same self-check over the sender's rows (how late is the machine's business).
    lags = sorted(r["sent"] - r["intended"] for r in rows(rs))
    assert rs["check"] == ol.self_check(lags)


def test_a_dry_run_keeps_the_schedule_and_sends_nothing(ol):
    port = free_port()  # nothing listens here
    result = ol.run(tokio(ol, f"http://127.0.0.1:{port}/", max_attempts=3, dry=True))
    attempts = rows(result)
    assert len(attempts) == result["visits"] == 20
    assert {a["outcome"] for a in attempts} == {"dry"}
    assert all(a["end"] == a["sent"] >= a["intended"] for a in attempts)


def test_a_missing_sender_is_a_clear_error(ol, monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/nonexistent")
    code = ol.main(
        [
            "--url",
            "http://127.0.0.1:1/",
            "--rate",
            "1",
            "--duration",
            "1",
            "--timeout",
            "1",
            "--engine",
            "tokio",
        ]
    )
    assert code == 2
    assert "openloop-sender on PATH" in capsys.readouterr().err


def test_the_tokio_engine_sends_http_only(ol):
    with pytest.raises(ol.SettingsError, match="http:// only"):
        tokio(ol, "https://127.0.0.1:1/")

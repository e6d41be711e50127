"""The open-loop generator's compiled sender (loadgen/sender: tokio and hyper) where it differs
from the asyncio engine: the same schedule and output side by side, a missing sender, http://
only. What both engines must do alike is tests/unit/test_openloop.py's, run once per engine."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from tests.unit.test_openloop import built, rows, serve_process, settings

__all__ = ["built"]  # the fixture, shared with test_openloop.py


@pytest.fixture
def ol(built, monkeypatch):
    """The generator with the compiled sender on PATH."""
    from tests.conftest import load_module

    monkeypatch.setenv("PATH", f"{built}{os.pathsep}{os.environ['PATH']}")
    return load_module("openloop", "loadgen/openloop.py")


def tokio(ol, url: str, **kw):
    return settings(ol, url, engine="tokio", **kw)


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

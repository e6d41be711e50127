"""The open-loop generator against local servers this test controls, one of which stalls."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import web

from tests.conftest import load_module
from tests.unit.conftest import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SENDER = ROOT / "loadgen" / "sender"
ENGINES = ("asyncio", "tokio")


@pytest.fixture(scope="module")
def ol():
    return load_module("openloop", "loadgen/openloop.py")


def cargo_missing() -> str:
    """Why the compiled sender cannot be built here: skipped on a reader's machine without
    cargo, a failure in CI (CI=true), whose setup (.ci/run) installs it."""
    return (
        "cargo is not on PATH: the compiled sender (loadgen/sender, the default engine) is "
        "built with it; .ci/run and the README's requirements install Debian's cargo"
    )


@pytest.fixture(scope="session")
def built() -> Path:
    """The compiled sender built from its lock file (cargo's own cache makes a second build
    quick): the folder that holds it."""
    if shutil.which("cargo") is None:
        if os.environ.get("CI") == "true":
            pytest.fail(cargo_missing())
        pytest.skip(cargo_missing())
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


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch) -> str:
    """Each engine in turn: the Python asyncio sender, then the compiled one on PATH."""
    if request.param == "tokio":
        built = request.getfixturevalue("built")
        monkeypatch.setenv("PATH", f"{built}{os.pathsep}{os.environ['PATH']}")
    return str(request.param)


@contextmanager
def serve(handler) -> Iterator[str]:
    """An aiohttp server with one route `/` on a thread of this process: its base URL."""
    app = web.Application()
    app.router.add_route("*", "/", handler)
    port = free_port()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for_port(port)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)


SERVER = """
import sys
from aiohttp import web
app = web.Application()
async def ok(request):
    return web.Response(text="ok")
app.router.add_get("/", ok)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""


@contextmanager
def serve_process() -> Iterator[str]:
    """An aiohttp server answering `ok` at once, in a process of its own: its base URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def stalling_server() -> Iterator[str]:
    """Accepts every connection (a deep listen queue) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(4096)
        yield f"http://127.0.0.1:{s.getsockname()[1]}/"


@contextmanager
def resetting_server() -> Iterator[str]:
    """Accepts, reads the request, then resets the connection (RST, no answer)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    srv.settimeout(0.2)
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.recv(4096)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join(timeout=2)
        srv.close()


def settings(ol, url: str, **kw):
    base = dict(
        url=url,
        phases=(ol.Phase(rate=20, seconds=None),),
        duration=1.0,
        timeout=1.0,
        arrival="constant",
        refresh_delay=0.1,
        max_attempts=1,
    )
    base.update(kw)
    return ol.Settings(**base)


def rows(result: dict) -> list[dict]:
    return [dict(zip(result["columns"], r, strict=True)) for r in result["attempts"]]


# --- settings -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"phases": "rate0"}, "rate must be above 0"),
        ({"timeout": -1.0}, "timeout must be a positive"),
        ({"timeout": 0.0}, "timeout must be a positive"),
        ({"duration": 0.0}, "duration must be a positive"),
        ({"phases": "long"}, "longer than the run"),
        ({"max_attempts": 0}, "max attempts must be at least 1"),
        ({"refresh_delay": -0.5}, "refresh delay"),
        ({"arrival": "bursty"}, "arrival must be one of"),
        ({"url": "ingress:8080"}, "url must start with http"),
        ({"phases": "empty"}, "at least one phase"),
        ({"processes": 0}, "processes must be 1 to 8"),
    ],
)
def test_bad_settings_are_clear_errors(ol, change, says):
    phases = {
        "rate0": (ol.Phase(rate=0, seconds=None),),
        "long": (ol.Phase(rate=10, seconds=20), ol.Phase(rate=5, seconds=20)),
        "empty": (),
    }
    if "phases" in change:
        change = {"phases": phases[change["phases"]]}
    with pytest.raises(ol.SettingsError, match=says):
        change = {"url": "http://127.0.0.1:1/", "duration": 30.0, **change}
        settings(ol, change.pop("url"), **change)


def test_command_line_refuses_bad_settings_without_a_traceback(ol, capsys):
    code = ol.main(
        ["--url", "http://127.0.0.1:1/", "--rate", "0", "--duration", "5", "--timeout", "1"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "rate must be above 0" in err and "Traceback" not in err


@pytest.mark.parametrize("text", ["fast", "10@x", "10@-3"])
def test_command_line_refuses_a_malformed_schedule(ol, capsys, text):
    code = ol.main(
        ["--url", "http://127.0.0.1:1/", "--rate", text, "--duration", "5", "--timeout", "1"]
    )
    assert code == 2
    assert "openloop:" in capsys.readouterr().err


# --- the schedule ---------------------------------------------------------------------------
def test_constant_schedule_is_evenly_spaced(ol):
    times = ol.arrival_times(
        settings(ol, "http://x/", duration=2.0, phases=(ol.Phase(rate=50, seconds=None),))
    )
    assert len(times) == 100
    gaps = {round(b - a, 9) for a, b in itertools.pairwise(times)}
    assert gaps == {0.02}


def test_poisson_schedule_is_seeded_and_has_the_rate(ol):
    s = settings(
        ol,
        "http://x/",
        duration=400.0,
        arrival="poisson",
        seed=7,
        phases=(ol.Phase(rate=50, seconds=None),),
    )
    a, b = ol.arrival_times(s), ol.arrival_times(s)
    other = ol.arrival_times(
        settings(
            ol,
            "http://x/",
            duration=400.0,
            arrival="poisson",
            seed=8,
            phases=(ol.Phase(rate=50, seconds=None),),
        )
    )
    assert a == b and a != other
    # 20,000 expected; a Poisson count's standard deviation is ~141: 5 sigma is ~700.
    assert abs(len(a) - 20_000) < 700
    gaps = [y - x for x, y in itertools.pairwise(a)]
    # Exponential gaps: about 63% are shorter than the mean (1/rate), not ~50% or ~100%.
    assert 0.60 < sum(g < 0.02 for g in gaps) / len(gaps) < 0.66


def test_rates_change_from_phase_to_phase(ol):
    s = settings(
        ol,
        "http://x/",
        duration=30.0,
        phases=(
            ol.Phase(rate=10, seconds=10),
            ol.Phase(rate=40, seconds=10),
            ol.Phase(rate=10, seconds=None),
        ),
    )
    times = ol.arrival_times(s)
    per_phase = [sum(lo <= t < lo + 10 for t in times) for lo in (0, 10, 20)]
    assert per_phase == [100, 400, 100]


# --- sending --------------------------------------------------------------------------------
def test_never_waits_for_answers_and_no_pool_caps_in_flight(ol, engine):
    """300 visits in 1 s to a server that never answers: every one leaves on time, and all are
    in flight at once (a pool of aiohttp's default 100 connections would cap them at 100)."""
    with stalling_server() as url:
        result = ol.run(
            settings(
                ol,
                url,
                engine=engine,
                phases=(ol.Phase(rate=300, seconds=None),),
                timeout=1.5,
            )
        )
    attempts = rows(result)
    assert len(attempts) == 300
    assert {a["outcome"] for a in attempts} == {"timeout"}
    # A sender that waited for answers would fall 1.5 s (the timeout) behind at once; a busy
    # machine can hold one send back by half a second (seen once), never by the timeout.
    assert max(a["sent"] - a["intended"] for a in attempts) < 1.0
    assert result["peak_in_flight"] > 250
    assert result["loop"].startswith(engine)


#: The latest a timed-out attempt may end after its timeout on a busy machine: the compiled
#: sender's process can be woken later than the asyncio loop in this one.
LATE_S = {"asyncio": 0.2, "tokio": 0.9}


def test_timeout_counts_from_the_intended_send(ol, engine):
    with stalling_server() as url:
        result = ol.run(
            settings(ol, url, engine=engine, phases=(ol.Phase(rate=10, seconds=None),), timeout=0.4)
        )
    for a in rows(result):
        assert a["outcome"] == "timeout"
        assert 0.38 < a["end"] - a["intended"] < 0.4 + LATE_S[engine], a


def test_users_who_give_up_refresh_until_their_attempts_run_out(ol, engine):
    with stalling_server() as url:
        result = ol.run(
            settings(
                ol,
                url,
                engine=engine,
                phases=(ol.Phase(rate=5, seconds=None),),
                timeout=0.3,
                refresh_delay=0.2,
                max_attempts=3,
            )
        )
    attempts = rows(result)
    assert len(attempts) == 5 * 3
    by_visit: dict[int, list[dict]] = {}
    for a in attempts:
        by_visit.setdefault(a["visit"], []).append(a)
    for tries in by_visit.values():
        tries.sort(key=lambda a: a["attempt"])
        assert [a["attempt"] for a in tries] == [1, 2, 3]
        for prev, nxt in itertools.pairwise(tries):
            assert nxt["intended"] == pytest.approx(prev["end"] + 0.2, abs=1e-9)


def test_refreshes_can_be_switched_off(ol, capsys):
    with stalling_server() as url:
        code = ol.main(
            [
                "--url",
                url,
                "--rate",
                "5",
                "--duration",
                "1",
                "--timeout",
                "0.3",
                "--arrival",
                "constant",
                "--no-refresh",
                "--engine",
                "asyncio",
            ]
        )
    out = capsys.readouterr().out
    result = json.loads(out)
    assert code == (0 if result["check"]["valid"] else 3)
    assert len(result["attempts"]) == 5
    assert {r[1] for r in result["attempts"]} == {1}


def test_a_user_who_succeeds_stops_refreshing(ol):
    async def handler(request):
        return web.Response(text="ok")

    with serve(handler) as url:
        result = ol.run(settings(ol, url, max_attempts=3))
    attempts = rows(result)
    assert len(attempts) == 20
    assert {(a["attempt"], a["outcome"], a["status"]) for a in attempts} == {(1, "ok", 200)}


def test_outcomes_ok_degraded_refused_reset_and_status(ol, engine):
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
            result = ol.run(
                settings(ol, url, engine=engine, phases=(ol.Phase(rate=5, seconds=None),))
            )
            outcomes[name] = {(a["outcome"], a["status"], a["attempt"]) for a in rows(result)}
    assert outcomes == {
        "refused": {("refused", 0, 1)},
        "reset": {("reset", 0, 1)},
        "status": {("status", 503, 1)},
        "degraded": {("degraded", 200, 1)},
        "ok": {("ok", 200, 1)},
    }


def test_latency_is_measured_from_the_intended_send_and_a_stalled_sender_is_caught(ol):
    """The generator's own loop is blocked for 0.3 s: the visits due meanwhile leave late, their
    latency includes the wait (no coordinated omission), and the run is marked invalid."""

    async def handler(request):
        return web.Response(text="ok")

    class Stalling(ol.Generator):
        async def run(self):
            asyncio.get_running_loop().call_later(0.3, time.sleep, 0.3)
            return await super().run()

    with serve(handler) as url:
        s = settings(ol, url, phases=(ol.Phase(rate=50, seconds=None),))
        result = asyncio.run(Stalling(s).run())
    attempts = rows(result)
    late = [a for a in attempts if 0.32 <= a["intended"] < 0.55]
    assert late and all(a["sent"] - a["intended"] > 0.04 for a in late)
    assert all(a["end"] - a["intended"] >= a["sent"] - a["intended"] for a in attempts)
    assert max(a["end"] - a["intended"] for a in late) > 0.2
    assert result["check"]["valid"] is False
    assert any("send lag p99" in r for r in result["check"]["reasons"])


def test_an_unstalled_run_sends_on_time(ol):
    # The server in a process of its own: on a thread here it would hold the GIL the
    # generator's loop needs, and the lag measured would be this test's, not the generator's.
    # Only the median is asserted: on a shared machine the OS may preempt this process now
    # and then, which is exactly what the self-check's p99 is there to catch.
    with serve_process() as url:
        result = ol.run(settings(ol, url, phases=(ol.Phase(rate=100, seconds=None),)))
    assert {a["outcome"] for a in rows(result)} == {"ok"}
    # Generous: 10 ms, the gap between sends at 100/s; a sender that batched its sends or slept
    # in coarse ticks would be late by about that gap for half of them or more.
    assert result["check"]["send_lag_p50_s"] < 0.010, result["check"]


@pytest.mark.parametrize(
    ("lags_ms", "valid", "says"),
    [
        ([1.0] * 99 + [9.0], True, None),
        # The edges: p99 at 10 ms holds, above it does not; a worst send at 100 ms holds.
        ([1.0] * 98 + [10.0, 10.0], True, None),
        ([1.0] * 98 + [10.5, 10.5], False, "send lag p99 10.5 ms > 10 ms"),
        ([1.0] * 300 + [100.0], True, None),
        ([1.0] * 300 + [150.0], False, "schedule not kept"),
        # A sweep's slow step: 66 sends, where the p99 is the largest lag. One late send is
        # allowed (as from 100 to 199 sends), two are not.
        ([1.0] * 65 + [14.0], True, None),
        ([1.0] * 64 + [14.0, 14.0], False, "2 of 66 sends later than that"),
        ([1.0] * 65 + [150.0], False, "schedule not kept"),
    ],
)
def test_self_check_verdict(ol, lags_ms, valid, says):
    check = ol.self_check(sorted(x / 1000 for x in lags_ms))
    assert check["valid"] is valid
    if says:
        assert any(says in r for r in check["reasons"]), check["reasons"]


@pytest.mark.parametrize("sends", [100, 101, 150, 199, 200, 250, 999, 1000, 1001, 3600])
def test_from_100_sends_the_late_send_rule_is_the_p99_bound(ol, sends):
    """The rule counts late sends; from 100 sends on it says exactly what a nearest-rank p99
    of at most 10 ms says, whatever the number of late sends."""
    for late in range(sends // 50 + 2):
        lags = sorted([0.001] * (sends - late) + [0.020] * late)
        p99_holds = ol.percentile(lags, 99) <= ol.MAX_SEND_LAG_P99_S
        assert ol.self_check(lags)["valid"] is p99_holds, (sends, late)


def test_events_fire_on_time_and_watches_poll_every_second(ol):
    seen: list[tuple[str, float]] = []

    async def handler(request):
        seen.append((request.method, time.monotonic()))
        return web.Response(text="state")

    with serve(handler) as url:
        s = settings(
            ol,
            url,
            duration=2.5,
            phases=(ol.Phase(rate=2, seconds=None),),
            events=(ol.Event(at=1.0, method="POST", url=url),),
            watches=(ol.Watch(name="status", url=url),),
        )
        result = ol.run(s)
    (event,) = result["events"]
    assert event["status"] == 200 and 1.0 <= event["sent"] < 1.1
    assert [round(w["t"]) for w in result["watches"]] == [0, 1, 2]
    assert all(w["body"] == "state" for w in result["watches"])


def test_users_who_back_off_wait_longer_each_time_with_jitter(ol):
    with stalling_server() as url:
        s = settings(
            ol,
            url,
            phases=(ol.Phase(rate=5, seconds=None),),
            timeout=0.3,
            refresh_delay=0.1,
            refresh_backoff=3.0,
            max_attempts=3,
        )
        result = ol.run(s)
    by_visit: dict[int, list[dict]] = {}
    for a in rows(result):
        by_visit.setdefault(a["visit"], []).append(a)
    waits = set()
    for visit, tries in by_visit.items():
        tries.sort(key=lambda a: a["attempt"])
        first, second = (b["intended"] - a["end"] for a, b in itertools.pairwise(tries))
        # 0.1 s then 0.3 s, each times a jitter in [0.5, 1.5], the same for the same visit.
        assert 0.05 <= first <= 0.15 and 0.15 <= second <= 0.45, (first, second)
        assert first == pytest.approx(ol.refresh_wait(s, visit=visit, attempt=1), abs=1e-9)
        waits.add(round(first, 6))
    assert len(waits) > 1  # jittered: not every user waits the same


def test_a_backoff_below_one_is_refused(ol):
    with pytest.raises(ol.SettingsError, match="refresh backoff must be 1 or more"):
        settings(ol, "http://127.0.0.1:1/", refresh_backoff=0.5)


def test_a_lesser_page_is_degraded_not_goodput_and_its_user_does_not_reload(ol):
    async def lesser(request):
        return web.Response(text="Hi there! (unavailable)", headers={"X-Degraded": "circuit-open"})

    with serve(lesser) as url:
        result = ol.run(
            settings(ol, url, phases=(ol.Phase(rate=10, seconds=None),), timeout=1, max_attempts=3)
        )
    attempts = rows(result)
    assert attempts and {a["outcome"] for a in attempts} == {"degraded"}
    assert {a["attempt"] for a in attempts} == {1}  # nobody reloaded a page they got


def test_a_dry_run_keeps_the_schedule_and_sends_nothing(ol, engine):
    """--dry: every visit's one attempt at its intended time, none sent (the URL answers
    nothing: a send would be refused), and the lag measured as in a real run."""
    port = free_port()  # nothing listens here
    url = f"http://127.0.0.1:{port}/"
    result = ol.run(settings(ol, url, engine=engine, max_attempts=3, dry=True))
    attempts = rows(result)
    assert len(attempts) == result["visits"] == 20
    assert {a["outcome"] for a in attempts} == {"dry"}
    assert all(a["end"] == a["sent"] >= a["intended"] for a in attempts)
    assert result["check"]["send_lag_p50_s"] < 0.010, result["check"]
    assert (
        ol.build_parser()
        .parse_args(["--url", "u", "--rate", "1", "--duration", "1", "--timeout", "1", "--dry"])
        .dry
        is True
    )


def test_two_processes_send_the_same_visits_as_one_on_one_clock(ol):
    """--processes 2: the visits dealt in turn to two event loops started together; every visit
    of the schedule sent once, at its time, the event once, a watch poll once a second."""
    seen: list[str] = []

    async def handler(request):
        seen.append(request.method)
        return web.Response(text="ok")

    with serve(handler) as url:
        base = settings(ol, url, duration=2.5, phases=(ol.Phase(rate=20, seconds=None),))
        one = ol.run(base)
        two = ol.run(
            replace(
                base,
                processes=2,
                events=(ol.Event(at=1.0, method="POST", url=url),),
                watches=(ol.Watch(name="status", url=url),),
            )
        )
    a, b = rows(one), rows(two)
    assert [(r["visit"], r["intended"]) for r in a] == [(r["visit"], r["intended"]) for r in b]
    assert {r["outcome"] for r in b} == {"ok"} and two["visits"] == len(b) == 50
    # One clock: no send before its time, and each process's sends at their times. A process
    # on a clock of its own would be off on every send (by its start-up, a tenth of a second
    # or more); a busy machine makes a few sends late, not the median, so the median is
    # compared, not the last send.
    assert all(r["sent"] >= r["intended"] for r in b), two["check"]
    for shard in (0, 1):
        lags = [r["sent"] - r["intended"] for r in b if r["visit"] % 2 == shard]
        assert lags and statistics.median(lags) < 0.05, (shard, two["check"])
    assert seen.count("POST") == 1 and len(two["events"]) == 1
    assert [round(w["t"]) for w in two["watches"]] == [0, 1, 2]
    assert 1 <= two["peak_in_flight"] <= 50


def test_merged_processes_count_the_peak_in_flight_over_all_of_them(ol):
    cols = list(ol.COLUMNS)

    def part(*spans, shard):
        rows_ = [[v, 1, s, s, e, "ok", 200, ""] for v, (s, e) in enumerate(spans, start=shard)]
        return {
            "columns": cols,
            "attempts": rows_,
            "sent_all_s": 1.0,
            "finished_s": 3.0,
            "events": [],
            "watches": [],
            "peak_in_flight": 99,
            "check": {},
        }

    # Two attempts overlap across the processes ([0, 2) and [1, 3)), the third does not.
    merged = ol.merge([part((0.0, 2.0), (2.5, 2.6), shard=0), part((1.0, 3.0), shard=10)])
    assert merged["peak_in_flight"] == 2
    assert [r[0] for r in merged["attempts"]] == [0, 10, 1]
    assert merged["check"]["valid"] is True

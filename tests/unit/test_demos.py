"""The companion demos without Docker: the registry, the compose files it points at, the demo
Flask app, and how the report tells serialised from concurrent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from playground.cli import build_parser
from playground.core import demos
from playground.core.compose import Docker
from playground.core.load import TOOLS
from playground.core.results import Entry, Run
from playground.core.scenarios import REGISTRY, SCENARIOS
from playground.core.verdicts import upgrade, verdicts
from playground.report import demo_shape, demo_table, write_report
from tests.conftest import load_module

ROOT = Path(__file__).resolve().parents[2]
ALL = (*demos.DEMOS, *demos.PUBLISHED)


# ---- the registry --------------------------------------------------------------------------


def test_names_are_unique_and_never_shadow_a_scenario():
    names = [t.name for t in ALL]
    assert len(set(names)) == len(names)
    # A demo called like a scenario would be refused by the registry (scenarios.registry_of).
    assert not set(names) & {t.name for t in SCENARIOS}
    assert all(REGISTRY[t.name] is t for t in ALL)


def test_demos_are_demos_and_not_in_the_bench():
    assert all(t.kind == "demo" for t in ALL)
    assert not {t.name for t in ALL} & {t.name for t in SCENARIOS}
    files = {t.compose_file for t in demos.DEMOS}
    assert files == {
        "demos/uwsgi-sleep.yml",
        "demos/gunicorn-workers.yml",
        "demos/sanic.yml",
        "demos/wrk-workers.yml",
    }


def service_block(text: str, service: str) -> str:
    match = re.search(rf"^  {re.escape(service)}:\n((?:    .*\n|\n)*)", text, flags=re.MULTILINE)
    assert match, f"no service {service!r}"
    return match.group(1)


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_each_target_points_at_a_published_service(target):
    text = (ROOT / target.compose_file).read_text()
    block = service_block(text, target.service)
    # Published on 127.0.0.1 only, and on the same port inside the network.
    assert f'ports: ["127.0.0.1:{target.host_port}:{target.port}"]' in block
    assert target.port == target.host_port
    assert re.search(rf"PORT_APP: {target.port}\b", block), block


def test_one_port_per_service_within_a_file():
    by_file: dict[str, dict[str, int]] = {}
    for t in ALL:
        ports = by_file.setdefault(t.compose_file, {})
        assert ports.setdefault(t.service, t.port) == t.port
    for ports in by_file.values():
        assert len(set(ports.values())) == len(ports)


def test_consecutive_targets_share_a_file():
    """The runner brings a file up once for a run of consecutive targets: no file twice."""
    for group in (demos.DEMOS, demos.PUBLISHED):
        files = [t.compose_file for t in group]
        runs = [f for i, f in enumerate(files) if i == 0 or files[i - 1] != f]
        assert len(runs) == len(set(runs)), runs


def test_uwsgi_demo_loads_are_the_published_ones():
    loads = {t.service: (t.requests, t.concurrency, t.delay) for t in demos.UWSGI_DEMOS}
    for service, load in loads.items():
        assert load == ((100, 10, 1.0) if service.endswith("_10") else (2000, 1000, 1.0))
    assert REGISTRY["uwsgi-threads-10"].tutorial_time_s == 10.098
    assert REGISTRY["uwsgi-gevent-1000"].tutorial_rps == pytest.approx(2000 / 5.143, abs=0.01)


def test_wrk_demo_short_by_default_published_as_an_option():
    assert {t.tool for t in demos.WRK_DEMOS} == {"wrk"}
    assert {t.duration_s for t in demos.WRK_DEMOS} == {None}  # the run's --duration
    assert {t.delay for t in demos.WRK_DEMOS} == {0.0, demos.SHORT_SLEEP_S}
    assert {t.tool for t in demos.PUBLISHED} == {"wrk-t12"} and "wrk-t12" in TOOLS
    assert TOOLS["wrk-t12"].command(
        url="u", requests=1, concurrency=400, timeout_s=40, duration_s=30, per_request_path=None
    )[2:8] == ["-t", "12", "-c", "400", "-d", "30s"]
    assert {(t.concurrency, t.duration_s) for t in demos.PUBLISHED} == {(400, 30.0)}
    assert {t.delay for t in demos.PUBLISHED} == {0.0, 10.0}
    assert len(demos.PUBLISHED) == len(demos.WRK_DEMOS) == 10


@pytest.mark.parametrize("group", [demos.WRK_DEMOS, demos.PUBLISHED], ids=["short", "published"])
def test_no_sleep_runs_before_the_sleeping_run_of_each_server(group):
    """After wrk stops, a sync worker still owes every queued sleeping request: measuring that
    server again afterwards would measure the backlog."""
    seen: dict[str, float] = {}
    for t in group:
        if t.service in seen:
            assert seen[t.service] == 0.0 and t.delay > 0, t.name
        seen[t.service] = t.delay


def test_legacy_rows_say_so_and_why():
    legacy = [t for t in ALL if t.notes]
    assert legacy and all(t.notes[0] == demos.LEGACY for t in legacy)
    assert "Gunicorn 25.3.0" in demos.LEGACY and "26.0 removed it" in demos.LEGACY
    assert {t.service for t in legacy} <= {"eventlet", "eventlet_patched", "sync_patched"}
    assert all("(legacy)" in t.title for t in legacy)


def test_files_below_the_root_get_the_roots_env_file(tmp_path):
    """Compose reads .env beside the first -f file: demos/ would miss the root's."""
    docker = Docker(root=tmp_path)
    assert docker.compose("demos/sanic.yml", "up") == [
        "docker",
        "compose",
        "-f",
        "demos/sanic.yml",
        "up",
    ]  # no .env: official images
    (tmp_path / ".env").write_text("PYTHON_IMAGE=x\n")
    assert docker.compose("demos/sanic.yml", "up") == [
        "docker",
        "compose",
        "--env-file",
        ".env",
        "-f",
        "demos/sanic.yml",
        "up",
    ]
    assert docker.compose("sync-uwsgi.yml", "up") == [
        "docker",
        "compose",
        "-f",
        "sync-uwsgi.yml",
        "up",
    ]  # the root's own .env applies


def test_cli_runs_demos_only_when_asked():
    parser = build_parser()
    assert not parser.parse_args(["run"]).demos
    args = parser.parse_args(["run", "--demos", "--published"])
    assert args.demos and args.published


# ---- the demo Flask app --------------------------------------------------------------------


@pytest.fixture()
def flask_sleep(monkeypatch):
    module = load_module("demo_flask_sleep", "demos/flask_sleep.py")
    slept: list[float] = []
    monkeypatch.setattr(module.time, "sleep", slept.append)
    return module, slept


def test_flask_sleep_sleeps_what_it_is_told(flask_sleep):
    module, slept = flask_sleep
    client = module.app.test_client()
    resp = client.get("/?delay=0.25")
    assert (resp.status_code, resp.text) == (200, "Hi there! slept 0.25 s with time.sleep\n")
    assert client.get("/?delay=0").text.rstrip("\n") == demos.SLEPT
    assert slept == [0.25, 0.0]


def test_flask_sleep_default_and_bad_input(flask_sleep, monkeypatch):
    module, slept = flask_sleep
    monkeypatch.setattr(module, "DEFAULT_DELAY", 10.0)
    client = module.app.test_client()
    assert client.get("/").text == "Hi there! slept 10 s with time.sleep\n"
    for query in ("delay=abc", "delay=-1", "delay=61", "delay=1&delay=2"):
        resp = client.get(f"/?{query}")
        assert resp.status_code == 400 and resp.text.startswith("delay "), query
    assert client.get("/nothere").status_code == 404
    assert slept == [10.0]


# ---- which demos serialise -----------------------------------------------------------------


def entry(name: str, *, steady: float | None, delay: float, c: int, tool: str = "ab", **kw) -> dict:
    return {
        "name": name,
        "kind": "demo",
        "title": name,
        "tool": tool,
        "requests": 10,
        "concurrency": c,
        "delay": delay,
        "steady_rps": steady,
        "rps": steady,
        "time_taken_s": 10.0,
        "threads_before": 3,
        "threads_peak": 3,
        "valid": True,
        "invalid_reasons": [],
        "error": None,
        "published": "sequential",
        **kw,
    }


@pytest.mark.parametrize(
    ("steady", "delay", "c", "shape"),
    [
        (1.05, 1.0, 5, "serialised"),  # ab against one-at-a-time: ~1 in flight
        (0.5, 2.0, 400, "serialised"),  # wrk: 5 requests in 10 s at 2 s each
        (4.6, 1.0, 5, "concurrent"),
        (180.0, 2.0, 400, "concurrent"),
        (56.0, 1.0, 1000, "capped"),
        (3000.0, 0.0, 400, "—"),  # no sleep: nothing to tell
        (None, 1.0, 5, "—"),
    ],
)
def test_demo_shape(steady, delay, c, shape):
    """Decided when measured (verdicts.verdicts), read by the report."""
    measured = verdicts(Entry.from_json(entry("x", steady=steady, delay=delay, c=c)))
    assert demo_shape(measured) == shape
    # The report decides nothing itself: an entry without its verdicts shows none.
    assert demo_shape(Entry.from_json(entry("x", steady=steady, delay=delay, c=c))) == "—"


def test_demo_shape_reads_the_tools_rate_not_steady_rps():
    """ab -n 10 -c 5 against one-at-a-time: 10 s, 1.0 rps, but c / mean latency = 1.4 because
    of ab's ramp-up (latencies 1, 1, 2, 3, 4, 5, 5, 5, 5, 5 s)."""
    serial = entry("x", steady=5 / 3.6, delay=1.0, c=5)
    assert demo_shape(verdicts(Entry.from_json({**serial, "rps": 1.0}))) == "serialised"
    # ab's own ceiling for n=10 c=5 is 10 / 3 requests/s: a concurrent server reaches it.
    concurrent = {**serial, "rps": 3.33, "steady_rps": 5.0, "ab_cap_rps": 10 / 3}
    assert demo_shape(verdicts(Entry.from_json(concurrent))) == "concurrent"


def test_report_shows_published_beside_ours_and_names_the_serialised(tmp_path):
    results = {
        "schema_version": 1,
        "run_id": "r",
        "started_at": "s",
        "finished_at": "f",
        "settings": {},
        "environment": {},
        "calibration": None,
        "scenarios": [
            entry(
                "workers-sync-patched", steady=1.05, delay=1.0, c=5, published="still sequential"
            ),
            entry("workers-gevent", steady=4.8, delay=1.0, c=5, published="concurrent"),
            entry(
                "wrk-sync-nosleep",
                steady=900.0,
                delay=0.0,
                c=400,
                tool="wrk",
                published="13,284 requests in 30 s",
            ),
        ],
    }
    write_report(run_dir=tmp_path, results=upgrade(Run.from_json(results)))
    markdown = (tmp_path / "report.md").read_text()
    section = markdown[markdown.index("## Companion demos") :]
    section = section[: section.index("\n## ", 5)]
    assert "still sequential" in section and "13,284 requests in 30 s" in section
    assert "9,000 requests in 10.0 s" in section  # wrk: its rate x its time
    assert "**Serialised:** workers-sync-patched." in section
    console = Console(record=True, width=250)
    console.print(demo_table(results=upgrade(Run.from_json(results))))
    text = console.export_text()
    assert "serialised" in text and "concurrent" in text
    assert demo_table(results=Run.from_json({**results, "scenarios": []})) is None

"""Faults under load, for real, through `playground faults`: a thread-based scenario (Gunicorn
4 x 50 threads) and a gevent one (gevent.pywsgi) through an upstream outage, an upstream
slow-down and an overload at c=2000; the bonus app through a database outage.

What every mode must do (asserted with generous margins, never a machine's speed): while the
upstream is down, answer 502/504 promptly (within its upstream timeout) and hang nothing;
serve normally again within seconds of the upstream's return, without a restart; under
overload, crash no process and restart no container, and serve normally afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from playground.faults.outage import UPSTREAM_GRACE_S
from tests.integration.conftest import ROOT, leftovers

pytestmark = pytest.mark.integration

PLAYGROUND = str(Path(sys.executable).with_name("playground"))
SCENARIOS = ("gunicorn-threads", "gevent-pywsgi")
C, DELAY, SLOW = 30, 1.0, 3.0
BOUND = DELAY + UPSTREAM_GRACE_S  # the apps' upstream timeout
RECOVER_S = 5  # "within a few seconds of the upstream's return"
OVERLOAD_C, POOL = 2000, 4 * 50  # ab's clients; Gunicorn's workers x threads (sync-gunicorn.yml)


def faults(results_dir: Path, *args: str, timeout: float = 600) -> dict:
    proc = subprocess.run(
        [PLAYGROUND, "faults", *args, "--no-build", "--quiet", "--results-dir", str(results_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    # Exit 0: every target did what it must (a problem found is exit 1, a failure 2).
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run,) = results_dir.glob("*-faults/faults.json")
    data = json.loads(run.read_text())
    assert data["finished_at"], data
    assert (run.parent / "faults.md").is_file()
    return data


@pytest.fixture(scope="module")
def app_faults(tmp_path_factory) -> dict:
    return faults(
        tmp_path_factory.mktemp("faults"),
        *SCENARIOS,
        "--fault",
        "upstream-outage",
        "--fault",
        "upstream-slowdown",
        "--fault",
        "overload",
        "-c",
        str(C),
        "--delay",
        str(DELAY),
        "--slow-delay",
        str(SLOW),
        "--baseline",
        "3",
        "--fault-seconds",
        "6",
        "--recovery",
        "8",
        "--overload-seconds",
        "12",
        "--probe-timeout",
        "30",
    )


@pytest.fixture(scope="module")
def db_faults(tmp_path_factory) -> dict:
    return faults(
        tmp_path_factory.mktemp("faults"),
        "bonus-psycopg2",
        "bonus-psycogreen",
        "--fault",
        "db-outage",
        "--delay",
        str(DELAY),
        "--baseline",
        "3",
        "--fault-seconds",
        "6",
        "--recovery",
        "10",
        "--probe-timeout",
        "30",
    )


def entries(data: dict, fault: str) -> dict[str, tuple[dict, dict]]:
    """{scenario: (its target entry, its run)} for one fault."""
    found = {}
    for run in data["runs"]:
        if run["fault"] == fault:
            assert run["error"] is None, run["error"]
            for t in run["targets"]:
                found[t["name"]] = (t, run)
    return found


def assert_no_restart_nor_crash(run: dict) -> None:
    for service, check in run["containers"].items():
        assert check["status"] == "running", (service, check)
        assert not check["restarted"] and check["restarts"] == 0, (service, check)
        assert check["lost_processes"] == [], (service, check)
        assert check["processes_after"] >= 1, (service, check)


def assert_outage_behaviour(
    target: dict, run: dict, *, codes: set[str], prompt_s: float = BOUND + 1
) -> None:
    during = target["phases"]["during"]["kinds"]
    # The fault bit: most requests while the service was down failed, with a documented code.
    failed = sum(n for k, n in during.items() if k != "200")
    assert failed >= 0.8 * sum(during.values()), during
    assert set(target["kinds"]) <= codes | {"200"}, target["kinds"]  # no 500, no reset, no hang
    assert "timeout" not in target["kinds"]
    # Promptly: nothing in flight while the service was down took longer than the upstream
    # timeout (plus a second of slack for a busy machine).
    assert target["longest_while_down_s"] <= BOUND + 1, target["longest_while_down_s"]
    # A request that starts while the service is down meets no one to wait for: its error
    # comes sooner than the service would have answered.
    longest_started_down = target["phases"]["during"]["longest_s"]
    assert longest_started_down is not None and longest_started_down <= prompt_s, target["phases"]
    assert target["recover_s"] is not None and target["recover_s"] <= RECOVER_S, target
    assert not target["stuck"], target["stuck_reason"]
    assert target["burst_after"]["kinds"] == {"200": target["burst_after"]["k"]}
    assert_no_restart_nor_crash(run)


@pytest.mark.parametrize("name", SCENARIOS)
def test_upstream_outage_gives_prompt_502s_and_recovers_without_restart(app_faults, name):
    target, run = entries(app_faults, "upstream-outage")[name]
    assert run["stopped_service"] == "slow_api"
    # slow_api stopped: its name no longer resolves and nothing listens, so a 502 comes well
    # before the upstream timeout (6 s). Measured 2026-11-26, seed 20261126: Gunicorn's within
    # the 1 s delay, gevent.pywsgi's longest 2.16 s (a stall not yet explained); bound 2 x delay
    # + 1 s.
    assert_outage_behaviour(target, run, codes={"502", "504"}, prompt_s=2 * DELAY + 1)


@pytest.mark.parametrize("name", SCENARIOS)
def test_upstream_slowdown_latency_follows_and_comes_back(app_faults, name):
    target, run = entries(app_faults, "upstream-slowdown")[name]
    assert target["kinds"] == {"200": target["requests"]}, target["kinds"]
    ph = target["phases"]
    # c=30 is within both modes' capacity: latency follows the upstream, 1 s -> 3 s -> 1 s.
    assert DELAY * 0.95 <= ph["before"]["p50_s"] < DELAY + 1
    assert SLOW * 0.95 <= ph["slow"]["p50_s"] < SLOW + 1.5
    assert ph["after"]["p50_s"] < DELAY + 1
    assert ph["slow"]["ok_rps"] < ph["before"]["ok_rps"]  # the same clients, slower answers
    assert target["settle_s"] is not None and target["settle_s"] <= SLOW + 2, target["settle_s"]
    assert not target["stuck"], target["stuck_reason"]
    assert_no_restart_nor_crash(run)


def assert_shed_names_what_ab_counted(target: dict) -> None:
    """Each way a request failed that ab counted is named with ab's own count, and none that
    ab did not count; "nothing shed" only where ab counted no failure at all."""
    ab, shed = target["ab"], " | ".join(target["shed"])
    counts = {
        "connections refused": ab["failures"].get("connect", 0),
        "connections reset": ab["failures"].get("receive", 0),
        "error answers (non-2xx)": ab["non_2xx"],
    }
    for words, n in counts.items():
        assert (f"{n} {words}" in shed) == (n > 0), (words, n, target["shed"])
    if any(counts.values()):
        assert "nothing shed" not in shed, target["shed"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_overload_crashes_nothing_and_says_where_load_was_shed(app_faults, name):
    target, _run = entries(app_faults, "overload")[name]
    ab = target["ab"]
    assert ab["error"] is None, ab
    assert target["concurrency"] == OVERLOAD_C and ab["complete"] > 0
    assert_shed_names_what_ab_counted(target)
    assert ab["latency_ms"]["p50"] >= DELAY * 1000  # a real load: every answer took the delay
    if name == "gunicorn-threads":
        # The tutorial's rule: a pool answers at most threads / delay a second, whatever the
        # machine (a slower one answers fewer). 2000 clients on 4 x 50 threads wait ten waves
        # of the delay for the last: the slowest tenth waits at least half of that. The median
        # is no bound: ab starts its 2000 clients over a second or two on a busy machine, and
        # a client's wait counts from its own start (3.8 s on one run, 7.8 s on another).
        waves = OVERLOAD_C / POOL
        assert ab["rps"] <= 1.25 * POOL / DELAY, ab
        assert ab["latency_ms"]["p90"] >= 0.5 * waves * DELAY * 1000, ab["latency_ms"]
        assert any("queue" in line for line in target["shed"]), target["shed"]
    assert not [
        k
        for k in target["probe"]["kinds"]
        if k.isdigit() and k.startswith("5") and k not in ("502", "503", "504")
    ]
    # Afterwards: a fresh request is answered, and a burst is as quick as before.
    assert target["drain_answer"] == "200", target
    assert not target["stuck"], target["stuck_reason"]
    for service, check in target["containers"].items():
        assert not check["problems"], (service, check)


@pytest.mark.parametrize("name", ["bonus-psycopg2", "bonus-psycogreen"])
def test_database_outage_gives_prompt_503s_and_recovers_without_restart(db_faults, name):
    target, run = entries(db_faults, "db-outage")[name]
    assert run["stopped_service"] == "postgres"
    assert_outage_behaviour(target, run, codes={"503"})


def test_fault_runs_write_a_report_and_leave_nothing_behind(app_faults, db_faults):
    # Both runs exited 0 with their report written (faults() asserts it as they end).
    for project in ("sync-gunicorn", "async-gevent-pywsgi", "bonus-psycopg2-gevent"):
        assert not any(leftovers(project).values()), project
    names = subprocess.run(
        ["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True
    ).stdout
    assert "flask-playground-overload-" not in names

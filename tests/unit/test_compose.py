"""compose.py: every Docker method is used, project names come from the files, and a scenario
brought up comes down on every path."""

from __future__ import annotations

import inspect
import re

import pytest

from playground.core.compose import Docker, declared_name, scenario_up
from tests.conftest import ROOT
from tests.unit.fakedocker import Steps as _Steps

SOURCES = sorted((ROOT / "src" / "playground").rglob("*.py"))


def test_every_docker_method_is_called_somewhere():
    """Dead code hides what the tool really does; and a method some module calls must exist."""
    code = "\n".join(p.read_text() for p in SOURCES)
    unused = [
        name
        for name, member in inspect.getmembers(Docker, inspect.isfunction)
        if not name.startswith("_")
        and not re.search(rf"\.{name}\(", code.replace(f"def {name}(", ""))
    ]
    assert unused == []
    called = set(re.findall(r"\bdocker\.([a-z_]+)\(", code))
    assert called <= {name for name, _ in inspect.getmembers(Docker, inspect.isfunction)}, (
        called - {name for name, _ in inspect.getmembers(Docker, inspect.isfunction)}
    )


def test_network_falls_back_to_the_files_declared_name(tmp_path):
    """Without a Compose to ask (a failed scenario), the name the file declares, not its stem."""
    (tmp_path / "demo.yml").write_text("# a demo\nname: demo-x\nservices: {}\n")
    docker = Docker(root=tmp_path, env={"PATH": str(tmp_path)})  # no docker on this PATH
    assert declared_name(tmp_path / "demo.yml") == "demo-x"
    assert docker.network("demo.yml") == "demo-x_default"


def test_a_health_check_still_starting_is_not_taken_for_healthy(tmp_path, monkeypatch):
    """`up` looks at every container's health itself after Compose's --wait: a "starting" or
    "unhealthy" one is named; healthy ones and those without a health check are not."""
    import subprocess

    rows = [
        '{"Service": "slow_api", "Health": "healthy"}',
        '{"Service": "flask_app", "Health": "starting"}',
        '{"Service": "postgres", "Health": ""}',
        "not json",
        '[{"Service": "ingress", "Health": "unhealthy"}]',
    ]
    docker = Docker(root=tmp_path, env={"PATH": str(tmp_path)})

    def fake_run(argv, **_kw):
        assert argv[-3:] == ["ps", "--format", "json"]
        return subprocess.CompletedProcess(argv, 0, stdout="\n".join(rows), stderr="")

    monkeypatch.setattr(docker, "run", fake_run)
    assert docker.not_healthy("x.yml") == ["flask_app: starting", "ingress: unhealthy"]


@pytest.mark.parametrize(
    ("fail", "steps", "worked"),
    [
        (None, ["ports", "up", "pin", "work", "down"], True),
        ("ports", ["ports"], False),  # nothing was brought up: nothing to bring down
        ("up", ["ports", "up", "down"], False),
        ("work", ["ports", "up", "pin", "work", "down"], True),
        ("down", ["ports", "up", "pin", "work", "down"], True),
    ],
)
def test_scenario_up_brings_down_on_every_path_and_records_a_docker_error_once(
    tmp_path, fail, steps, worked
):
    docker = _Steps(tmp_path, fail=fail)
    failed: list[str] = []
    warned: list[str] = []
    with scenario_up(docker, "x.yml", failed=failed.append, warn=warned.append) as up:
        assert up is worked
        if up:
            docker._step("work")
    assert docker.steps == steps
    assert failed == ([] if fail is None else [f"{fail} failed"])  # the first line only
    assert warned == ([] if fail is None else [f"{fail} failed\n--- last log lines ---\nsomething"])


def test_scenario_up_lets_an_interrupt_through_after_bringing_down(tmp_path):
    docker = _Steps(tmp_path)
    with pytest.raises(KeyboardInterrupt), scenario_up(docker, "x.yml", failed=print):
        raise KeyboardInterrupt
    assert docker.steps == ["ports", "up", "pin", "down"]

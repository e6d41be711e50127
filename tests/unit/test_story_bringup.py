"""The story brings a target up through the bring-up every kind of run shares
(`compose.scenario_up`): its --wait-timeout reaches `docker compose up --wait`, the target comes
down on every way out, and a Docker error, in the bring-up or in the measurement, reaches the
measurement whole (its last log lines included) to be recorded as its error."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from playground.core.compose import Docker, DockerError
from playground.story import run as story_run
from playground.story.run import RunInProgress, brought_up
from tests.unit.fakedocker import Steps as _Steps


def _story(docker: Docker) -> RunInProgress:
    return RunInProgress(
        run=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
        docker=docker,
        info=print,
        warn=print,
        wait_timeout_s=321,
    )


@pytest.fixture
def no_servers(monkeypatch):
    """The servers' addresses without Docker (no ingress: no stub_status to wait for)."""
    monkeypatch.setattr(
        story_run, "_servers", lambda docker, target: SimpleNamespace(ingress_ip=None)
    )


TARGET = SimpleNamespace(name="story-x", compose_files="x.yml")


def test_a_target_comes_up_with_the_runs_wait_timeout_and_goes_down(tmp_path, no_servers):
    docker = _Steps(tmp_path)
    with brought_up(_story(docker), TARGET):  # type: ignore[arg-type]
        docker._step("work")
    # Whatever was left of an earlier run brought down first.
    assert docker.steps == ["down", "ports", "up", "pin", "work", "down"]
    assert docker.waits == [321]


@pytest.mark.parametrize(
    ("fail", "steps"),
    [
        ("up", ["down", "ports", "up", "down"]),
        ("work", ["down", "ports", "up", "pin", "work", "down"]),
    ],
)
def test_a_docker_error_reaches_the_measurement_whole(tmp_path, no_servers, fail, steps):
    docker = _Steps(tmp_path, fail=fail)
    worked = []
    with pytest.raises(DockerError) as raised, brought_up(_story(docker), TARGET):  # type: ignore[arg-type]
        docker._step("work")
        worked.append(True)
    assert str(raised.value) == f"{fail} failed\n--- last log lines ---\nsomething"
    assert docker.steps == steps
    assert worked == []


def test_an_interrupt_goes_through_after_bringing_down(tmp_path, no_servers):
    docker = _Steps(tmp_path)
    with pytest.raises(KeyboardInterrupt), brought_up(_story(docker), TARGET):  # type: ignore[arg-type]
        raise KeyboardInterrupt
    assert docker.steps == ["down", "ports", "up", "pin", "down"]

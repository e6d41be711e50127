"""`playground swarm`: every mistake is one line and exit 2, before Docker is touched; the
settings' checks and the senders' command lines."""

from __future__ import annotations

from typing import Any

import pytest

from playground import cli
from playground.commands import swarm as command
from playground.core.errors import UsageError
from playground.core.scenarios import resolve_story
from playground.incident.settings import StorySettings
from playground.swarm.senderjobs import sender_commands
from playground.swarm.settings import registry_address, require_manager


@pytest.fixture
def no_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("Docker was reached")

    monkeypatch.setattr(command, "session", refuse)


@pytest.mark.usefixtures("no_docker")
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--senders", "0"], "--senders must be 1 or more, got 0"),
        (["--replicas", "0"], "--replicas must be 1 or more, got 0"),
        (["--registry", "http://registry:5000"], "--registry takes HOST:PORT"),
        (["--registry", "registry"], "--registry takes HOST:PORT"),
        (["nope"], "unknown story target 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["swarm", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err
    assert "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "text", ["127.0.0.1:5000", "registry.example:5000", "[::1]:5000", "node-2:443"]
)
def test_a_registry_as_host_and_port_is_taken(text: str) -> None:
    assert registry_address(text) == text


@pytest.mark.parametrize("text", ["127.0.0.1", "host:0", "host:70000", "host:5000/path", ":5000"])
def test_a_registry_otherwise_is_refused(text: str) -> None:
    with pytest.raises(UsageError):
        registry_address(text)


def test_a_manager_is_used_and_no_swarm_is_started_and_left() -> None:
    assert require_manager("active true\n") is True
    assert require_manager("inactive false\n") is False


@pytest.mark.parametrize(
    ("state", "said"),
    [("active false", "swarm worker"), ("locked false", "swarm is locked"), ("", "unknown")],
)
def test_no_manager_is_refused(state: str, said: str) -> None:
    with pytest.raises(UsageError, match=f"no swarm manager.*{said}"):
        require_manager(state)


def test_each_sender_sends_its_share_with_its_own_seed_and_one_starts_the_incident() -> None:
    (target,) = resolve_story(["gunicorn-threads"])
    s = StorySettings()
    commands = sender_commands(settings=s, target=target, senders=3)

    def value(argv: list[str], flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert [float(value(c, "--rate")) for c in commands] == pytest.approx([s.rate / 3] * 3)
    assert [int(value(c, "--seed")) for c in commands] == [s.seed, s.seed + 1, s.seed + 2]
    assert ["--at" in c for c in commands] == [True, False, False]
    assert all("--out" not in c for c in commands)  # the JSON goes to the service's log

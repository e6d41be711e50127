"""Teardown commands cannot be cut half-way by Ctrl-C or SIGTERM: the signal is held until the
command has finished, then acted on (that is how nothing is left behind)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from playground.core.compose import Docker
from playground.core.signals import deferred_signals


def signal_once(started: Path, sig: int, *, timeout: float = 10) -> None:
    """`sig` to this process as soon as the file `started` (which the command writes first)
    says the work to interrupt is under way, looked for during `timeout` s."""

    def send() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if started.exists():
                os.kill(os.getpid(), sig)
                return
            time.sleep(0.01)

    threading.Thread(target=send, daemon=True).start()


@pytest.fixture(autouse=True)
def sigterm_raises():
    """As the CLI sets it up: SIGTERM becomes KeyboardInterrupt."""

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, handler)
    yield
    signal.signal(signal.SIGTERM, old)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_shielded_command_finishes_then_the_signal_counts(tmp_path, sig):
    docker = Docker(root=tmp_path)
    signal_once(tmp_path / "started", sig)
    with pytest.raises(KeyboardInterrupt):
        try:
            docker.run(
                ["sh", "-c", "touch started; sleep 1; echo done > out"],
                shielded=True,
                timeout=30,
            )
        finally:
            # The command ran to its end although the signal came once it had started.
            assert (tmp_path / "out").read_text() == "done\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_unshielded_command_is_interrupted_at_once(tmp_path):
    docker = Docker(root=tmp_path)
    signal_once(tmp_path / "started", signal.SIGINT)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        docker.run(["sh", "-c", "touch started; sleep 5; echo done > out"], timeout=30)
    assert time.monotonic() - started < 5  # before the command could have ended by itself
    assert not (tmp_path / "out").exists()


def test_nested_blocks_hold_the_signal_until_the_outer_one_ends():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            with deferred_signals():
                os.kill(os.getpid(), signal.SIGTERM)  # arrives inside both blocks
                steps.append("inner done")
            steps.append("outer done")
    assert steps == ["inner done", "outer done"]


def test_the_signal_wins_over_an_error_raised_meanwhile():
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            raise RuntimeError("docker said no")


def test_no_signal_no_interrupt():
    with deferred_signals():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

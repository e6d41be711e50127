"""Teardown commands cannot be cut half-way by Ctrl-C or SIGTERM: the signal is held until the
command has finished, then acted on (that is how nothing is left behind)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from playground.compose import Docker
from playground.signals import deferred_signals


def signal_soon(sig: int, after: float = 0.3) -> threading.Timer:
    timer = threading.Timer(after, os.kill, (os.getpid(), sig))
    timer.start()
    return timer


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
    signal_soon(sig)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        try:
            docker.run(["sh", "-c", "sleep 1; echo done > out"], shielded=True)
        finally:
            # The command ran to its end although the signal came 0.3 s into it.
            assert (tmp_path / "out").read_text() == "done\n"
    assert time.monotonic() - started >= 0.9
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_unshielded_command_is_interrupted_at_once(tmp_path):
    docker = Docker(root=tmp_path)
    signal_soon(signal.SIGINT)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        docker.run(["sh", "-c", "sleep 5; echo done > out"])
    assert time.monotonic() - started < 3
    assert not (tmp_path / "out").exists()


def test_nested_blocks_hold_the_signal_until_the_outer_one_ends():
    steps = []
    signal_soon(signal.SIGTERM, after=0.1)
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            with deferred_signals():
                time.sleep(0.3)
                steps.append("inner done")
            time.sleep(0.2)
            steps.append("outer done")
    assert steps == ["inner done", "outer done"]


def test_the_signal_wins_over_an_error_raised_meanwhile():
    signal_soon(signal.SIGINT, after=0.1)
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            time.sleep(0.3)
            raise RuntimeError("docker said no")


def test_no_signal_no_interrupt():
    with deferred_signals():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

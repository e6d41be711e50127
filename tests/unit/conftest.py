"""Real local servers for the unit tests: the slow API on a thread, and ports that misbehave."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from aiohttp import web

from tests.conftest import load_module


def free_port() -> int:
    """A port nothing listens on (closed again at once): connecting to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, *, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing answered on 127.0.0.1:{port} within {timeout} s")


@contextmanager
def serve_slow_api(name: str = "unit_slow_api", calls_log: str | None = None) -> Iterator[int]:
    """The real slow_api, served by aiohttp on a thread of this process, on a free port (with
    its calls log at `calls_log`, where given)."""
    module = load_module(name, "slow_api/app.py")
    port = free_port()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(module.make_app(calls_log=calls_log))

    def serve():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    wait_for_port(port)
    try:
        yield port
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)


@pytest.fixture()
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers: an upstream that hangs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield s.getsockname()[1]

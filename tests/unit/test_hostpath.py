"""Naming what went wrong on the host path: docker-proxy's state and limits, read from /proc.

A real process stands in for docker-proxy (a shell started under that name with the proxy's
options), so its states (running, then defunct once killed and not reaped) are the kernel's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from playground.bench import hostpath
from playground.bench.hostpath import HostPath, Proxy
from tests.unit.conftest import free_port


@pytest.fixture
def fake_proxy():
    """A live process whose command line is docker-proxy's for a port of its own (free: no real
    docker-proxy forwards it, nor another test's stand-in); killed, never reaped. It carries
    its port as `.port`."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "docker-proxy",
            "-c",
            # `read`, a builtin: the shell waits without forking. A child it forked (`sleep`)
            # would carry the same command line until its exec, and a snapshot taken then
            # would see a second proxy that is gone at the next.
            "read _",
            "-proto",
            "tcp",
            "-host-ip",
            "127.0.0.1",
            "-host-port",
            str(port),
            "-container-ip",
            "172.20.0.3",
            "-container-port",
            "3000",
        ],
        executable="/bin/sh",
        stdin=subprocess.PIPE,  # never written: `read` waits until the process is killed
    )
    deadline = time.monotonic() + 5  # until the child has exec'd under its new name
    while not hostpath.find_proxies(port=port) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.port = port  # type: ignore[attr-defined]
    yield proc
    proc.kill()
    proc.wait()
    proc.stdin.close()


def wait_for_state(pid: int, state: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == state:
            return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never reached state {state}")


def test_finds_the_proxy_of_one_port_only(fake_proxy):
    PORT = fake_proxy.port
    found = hostpath.find_proxies(port=PORT)
    assert [p.pid for p in found] == [fake_proxy.pid]
    assert found[0].alive and found[0].limit and found[0].limit > 0
    assert hostpath.find_proxies(port=PORT + 1) == ()


def test_a_proxy_that_died_under_load_is_named_defunct(fake_proxy):
    PORT = fake_proxy.port
    before = hostpath.snapshot(port=PORT)
    os.kill(fake_proxy.pid, signal.SIGKILL)
    wait_for_state(fake_proxy.pid, "Z")  # exited; its parent (this test) has not reaped it
    # A defunct process has no command line left: it is followed by its pid.
    assert hostpath.find_proxies(port=PORT) == ()
    after = hostpath.snapshot(port=PORT, known=before.proxies)
    assert after.proxies[0].state == "Z" and not after.proxies[0].alive
    notes = hostpath.causes(
        before=before,
        after=after,
        concurrency=5000,
        output="apr_socket_recv: Connection reset by peer (104)",
    )
    assert any(
        f"pid {fake_proxy.pid}" in n and "defunct" in n and "refuses every" in n for n in notes
    ), notes
    assert "load-generator container" in notes[-1]


def test_a_healthy_proxy_with_room_names_nothing_but_the_path(fake_proxy):
    PORT = fake_proxy.port
    before = hostpath.snapshot(port=PORT)
    after = replace(hostpath.snapshot(port=PORT), listen_overflows=before.listen_overflows)
    limit = before.proxies[0].limit
    small = max(1, limit // 10)
    assert hostpath.causes(before=before, after=after, concurrency=small, output="") == []
    # The same load that ended in resets: the proxy is not to blame, but it is on the path.
    notes = hostpath.causes(
        before=before,
        after=after,
        concurrency=small,
        output="apr_socket_connect(): Connection reset by peer (104)",
    )
    assert len(notes) == 1 and "docker-proxy" in notes[0]


def host(*, proxies=(), overflows=0, somaxconn=4096, conntrack=(100, 262144)) -> HostPath:
    return HostPath(
        port=3000,
        proxies=tuple(proxies),
        listen_overflows=overflows,
        somaxconn=somaxconn,
        conntrack=conntrack,
    )


def test_open_file_limit_overflows_and_conntrack_are_each_named():
    proxy = Proxy(pid=42, state="S", open_files=7, limit=20000)
    busy = replace(proxy, open_files=19990)
    notes = hostpath.causes(
        before=host(proxies=[proxy], overflows=45),
        after=host(proxies=[busy], overflows=1045, conntrack=(250000, 262144)),
        concurrency=10000,
        output="",
    )
    text = "\n".join(notes)
    assert "c=10000 needs about 20000, against its open-file limit of 20000" in text
    assert "overflowed 1000 times" in text and "net.core.somaxconn = 4096" in text
    assert "250000 of net.netfilter.nf_conntrack_max = 262144" in text
    # Half the limit in use and nothing overflowing: none of those is blamed.
    calm = hostpath.causes(
        before=host(proxies=[proxy]), after=host(proxies=[proxy]), concurrency=5000, output=""
    )
    assert calm == []


def test_without_a_userland_proxy_nothing_is_blamed_on_it():
    assert (
        hostpath.causes(
            before=host(), after=host(), concurrency=5000, output="Connection reset by peer"
        )
        == []
    )


def test_a_port_nobody_listens_on_any_more_is_named():
    gone = replace(host(), listening=False)
    notes = hostpath.causes(
        before=gone,
        after=gone,
        concurrency=100,
        output="apr_socket_connect(): Connection refused (111)",
    )
    assert "nothing on the host listens on port 3000" in notes[0]
    assert hostpath.causes(before=gone, after=gone, concurrency=100, output="") == []


def test_sees_a_real_listening_socket():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert hostpath.snapshot(port=port).listening is False
        s.listen()
        assert hostpath.snapshot(port=port).listening is True


def test_unreadable_proc_gives_unknowns_not_errors(tmp_path):
    snap = hostpath.snapshot(port=3000, proc=tmp_path)
    assert snap == HostPath(
        port=3000, proxies=(), listen_overflows=None, somaxconn=None, conntrack=None
    )


def test_reads_the_listen_overflow_counter_from_netstat(tmp_path):
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "netstat").write_text(
        "TcpExt: SyncookiesSent ListenOverflows ListenDrops\n"
        "TcpExt: 0 45 45\n"
        "IpExt: InNoRoutes\n"
        "IpExt: 0\n"
    )
    assert hostpath.snapshot(port=3000, proc=tmp_path).listen_overflows == 45

"""`--slow-netem CONTAINER:HOST`: Linux's `tc netem` delays the packets CONTAINER sends to
HOST while the incident lasts, where the kernel has the netem qdisc.

netem delays packets, not calls: every packet the container sends to HOST waits the delay.
A call on a connection already open pays it once (its request's packets; the answer comes
back undelayed); a call that opens a new connection pays it twice, once for its SYN and
once for the request sent after the handshake; a request or answer large enough to need
acknowledgements from the container pays again per window. `tc` runs in a throwaway
container (the delay proxy's image, which has iproute2) in CONTAINER's network namespace;
the delay is removed at the incident's end and on every way out.

Whether the kernel has netem is asked the same way, in a network namespace of its own
(`--network none`), so nothing of the machine's is touched: a kernel without it answers
"Specified qdisc kind is unknown", and the option is refused before any load.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from playground.core.compose import DELAY_PROXY_IMAGE, Docker
from playground.incident.settings import StoryError

_TC = ["docker", "run", "--rm", "--user", "root", "--cap-add", "NET_ADMIN"]
PROBE = [*_TC, "--network", "none", DELAY_PROXY_IMAGE, "tc", "qdisc", "add", "dev", "lo", "root"]
PROBE += ["netem", "delay", "1ms"]


@dataclass(frozen=True)
class NetemTarget:
    container: str
    host: str

    @classmethod
    def parse(cls, text: str) -> NetemTarget:
        container, sep, host = text.partition(":")
        name = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")
        if not sep or not name.match(container) or not name.match(host):
            raise StoryError(
                f"--slow-netem {text!r}: expected CONTAINER:HOST, e.g. "
                "story-gunicorn-threads-flask_app-1:slow_api"
            )
        return cls(container=container, host=host)

    def check(self, docker: Docker) -> None:
        """Refuse where the kernel has no netem qdisc, or the container is not running."""
        proc = docker.run(PROBE, check=False, timeout=60)
        if proc.returncode != 0:
            said = (proc.stderr or proc.stdout).strip().splitlines()
            raise StoryError(
                "--slow-netem: this machine's kernel cannot delay packets with netem ("
                f"tc: {said[-1] if said else 'no answer'}); slow the dependency with "
                "--slow-dependency NAME=URL (the delay proxy) instead"
            )
        state = docker.state(self.container)
        if state is None or state.status != "running":
            raise StoryError(f"--slow-netem: no running container {self.container}")

    def describe(self, when: str) -> str:
        return f"tc netem on {self.container}'s packets to {self.host} ({when})"

    def argv(self, script: str) -> list[str]:
        network = ["--network", f"container:{self.container}"]
        return [*_TC, *network, DELAY_PROXY_IMAGE, "sh", "-c", script]

    def commands(
        self, docker: Docker, *, delay: float
    ) -> tuple[Callable[[], tuple[int | None, str]], Callable[[], tuple[int | None, str]]]:
        """The incident's start (a prio qdisc whose third band delays, a filter sending the
        packets for HOST's address there) and its end (the root qdisc removed)."""
        ms = max(1, round(delay * 1000))
        host = shlex.quote(self.host)
        on = (
            f"ip=$(getent ahostsv4 {host} | head -n 1 | cut -d' ' -f1) && "
            "tc qdisc add dev eth0 root handle 1: prio && "
            f"tc qdisc add dev eth0 parent 1:3 handle 30: netem delay {ms}ms && "
            'tc filter add dev eth0 protocol ip parent 1:0 prio 3 u32 match ip dst "$ip/32" '
            "flowid 1:3"
        )
        off = "tc qdisc del dev eth0 root"

        def run(script: str) -> Callable[[], tuple[int | None, str]]:
            def go() -> tuple[int | None, str]:
                proc = docker.run(self.argv(script), check=False, timeout=60, shielded=True)
                return proc.returncode, (proc.stdout + proc.stderr)[-2000:]

            return go

        return run(on), run(off)

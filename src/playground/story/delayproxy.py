"""The delay proxy (delayproxy/): nginx with its Lua module in front of a service's dependency,
started beside the service on its network for one run, and removed on every way out.

The proxy takes a name of its own on the network (`--slow-dependency NAME=URL`: NAME), and
the service is pointed at NAME instead of the dependency. It does not take the dependency's
own name: Docker's DNS would then answer that name with both addresses, and about half the
calls would go round the proxy (and the proxy's own calls to the dependency could come back
to itself). It listens on the dependency's port, so the service's setting changes by its
host name alone. Every call sleeps for the delay in a shared dict before it is passed on;
the incident sets that delay through the admin port (the generator sends the request at
its time, as it sends the story's to slow_api), with an expiry: the delay ends by itself.

Each proxy carries the label :data:`~playground.core.compose.DELAY_PROXY_LABEL`: one left by a
command killed with SIGKILL is removed by the next command's session (and by `make down`).
"""

from __future__ import annotations

import os
import re
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from playground.core.compose import DELAY_PROXY_IMAGE, DELAY_PROXY_LABEL, Docker, DockerError
from playground.core.target import plain_decimal as num
from playground.incident.settings import StoryError

ADMIN_PORT = 9901
#: How long the proxy may take to answer on its admin port and reach the dependency.
START_TIMEOUT_S = 20.0
_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")


@dataclass(frozen=True)
class Dependency:
    """`--slow-dependency NAME=URL`: the proxy's name on the network and what it stands for."""

    name: str
    url: str
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Dependency:
        name, sep, url = text.partition("=")
        parts = urllib.parse.urlsplit(url)
        if not sep or not _NAME.match(name):
            raise StoryError(
                f"--slow-dependency {text!r}: expected NAME=URL, NAME a host name for the "
                "proxy (letters, digits, _ . -), e.g. slow_api_delayed=http://slow_api:4000"
            )
        if parts.scheme != "http" or not parts.hostname:
            raise StoryError(
                f"--slow-dependency {text!r}: the dependency's URL must be http://HOST[:PORT] "
                "(the proxy passes plain HTTP; a TLS dependency needs --incident-start instead)"
            )
        try:
            port = parts.port or 80
        except ValueError:
            raise StoryError(f"--slow-dependency {text!r}: its port is not a number") from None
        if name == parts.hostname:
            raise StoryError(
                f"--slow-dependency {text!r}: the proxy needs a name of its own, not the "
                "dependency's (point the service at that name)"
            )
        if port == ADMIN_PORT:
            raise StoryError(f"--slow-dependency {text!r}: port {ADMIN_PORT} is the proxy's admin")
        return cls(name=name, url=url, host=parts.hostname, port=port)

    @property
    def upstream(self) -> str:
        return f"{self.host}:{self.port}"

    def admin(self, path: str) -> str:
        return f"http://{self.name}:{ADMIN_PORT}{path}"

    def incident_url(self, *, seconds: float, lasts: float) -> str:
        """The admin request that starts the incident: every call `seconds` slower for
        `lasts` seconds, then as before by itself."""
        return self.admin(f"/delay?extra={num(seconds)}&seconds={num(lasts)}")


def run_argv(dep: Dependency, *, network: str, run_id: str) -> list[str]:
    """`docker run` for the proxy: on the service's network under NAME, labelled with the run."""
    return [
        "docker",
        "run",
        "--detach",
        "--name",
        f"playground-delay-{dep.name}-{run_id}",
        "--label",
        # The run, and the command's process: a proxy whose command is gone is a leftover.
        f"{DELAY_PROXY_LABEL}={run_id}/{os.getpid()}",
        "--network",
        network,
        "--network-alias",
        dep.name,
        *("--env", f"UPSTREAM={dep.upstream}", "--env", f"LISTEN={dep.port}"),
        *("--env", f"ADMIN={ADMIN_PORT}"),
        DELAY_PROXY_IMAGE,
    ]


def check_name_free(docker: Docker, dep: Dependency, *, network: str) -> None:
    """NAME must not answer on the network yet: it would be shared with whatever has it."""
    argv = docker.loadgen_argv(network=network, tool_argv=["getent", "hosts", dep.name])
    if docker.run(argv, check=False, timeout=60).returncode == 0:
        raise StoryError(
            f"--slow-dependency: {dep.name} already answers on {network}: give the proxy a "
            "name nothing there has"
        )


@contextmanager
def delay_proxy(
    docker: Docker, dep: Dependency, *, network: str, run_id: str, info: Callable[[str], None]
) -> Iterator[str]:
    """The proxy up and reaching the dependency for the block; removed afterwards, on an
    error, a Ctrl-C or a SIGTERM too (the removal itself cannot be interrupted)."""
    container = docker.run(run_argv(dep, network=network, run_id=run_id), timeout=60).stdout
    container = container.strip()
    try:
        _wait_ready(docker, dep, container=container, network=network)
        info(f"delay proxy {dep.name} in front of {dep.url}, on {network}")
        yield container
    finally:
        docker.remove(container)
        info(f"delay proxy {dep.name} stopped and removed")


def _wait_ready(docker: Docker, dep: Dependency, *, container: str, network: str) -> None:
    """Until the admin port says the dependency is reachable; a clear error otherwise."""
    deadline = time.monotonic() + START_TIMEOUT_S
    answer = "no answer"
    while time.monotonic() < deadline:
        state = docker.state(container)
        if state is None or state.status not in ("created", "running"):
            _, logs = docker.container_logs(container)
            said = logs.strip().splitlines()
            raise DockerError(
                f"the delay proxy for {dep.url} did not start: {said[-1] if said else 'no log'}"
            )
        status, body = docker.fetch(network=network, url=dep.admin("/reach"), timeout_s=5)
        if status == 200:
            return
        if status == 502:
            raise DockerError(f"the delay proxy cannot reach the dependency: {body.strip()}")
        answer = body.strip() or f"status {status}"
        time.sleep(0.5)
    raise DockerError(f"the delay proxy did not answer within {START_TIMEOUT_S:g} s ({answer})")


def _alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def remove_leftovers(docker: Docker, say: Callable[[str], None]) -> list[str]:
    """Remove every delay proxy whose command is gone (killed before it could remove its
    own), saying so; their ids. One whose command still runs is left to it."""
    removed = []
    for container, value in docker.labelled(DELAY_PROXY_LABEL):
        run_id, _, pid = value.rpartition("/")
        if _alive(pid):
            continue
        docker.remove(container)
        removed.append(container)
        say(
            f"removed a delay proxy left behind by run {run_id or '?'} (container "
            f"{container[:12]}): its command was killed before it could remove it"
        )
    return removed

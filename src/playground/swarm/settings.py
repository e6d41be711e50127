"""What `playground swarm` is asked for beyond the story's settings, checked before Docker is
touched: each mistake is one line (UsageError) and exit 2."""

from __future__ import annotations

import re
from dataclasses import dataclass

from playground.core.errors import UsageError

#: HOST:PORT: a host name, an IPv4 address or a bracketed IPv6 one, and a port.
ADDRESS = re.compile(
    r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(?P<port>\d{1,5})"
)
#: Where the registry the runner starts listens, when none is given.
LOCAL_REGISTRY = "127.0.0.1:5000"


def registry_address(text: str) -> str:
    """A registry given as HOST:PORT, or a clear refusal (no scheme, no path)."""
    found = ADDRESS.fullmatch(text.strip())
    if found is None or not 0 < int(found["port"]) < 65536:
        raise UsageError(
            f"--registry takes HOST:PORT (e.g. {LOCAL_REGISTRY} or registry.example:5000), "
            f"got {text!r}"
        )
    return text.strip()


@dataclass(frozen=True)
class SwarmSettings:
    """The stack's shape and where its images come from."""

    registry: str | None  # HOST:PORT; None: the runner starts one locally and removes it
    replicas: int  # of the app
    senders: int  # open-loop senders, at rate/senders each


def swarm_settings(*, registry: str | None, replicas: int, senders: int) -> SwarmSettings:
    """The settings, or the first mistake as one line."""
    if replicas < 1:
        raise UsageError(f"--replicas must be 1 or more, got {replicas}")
    if senders < 1:
        raise UsageError(f"--senders must be 1 or more, got {senders}")
    return SwarmSettings(
        registry=None if registry is None else registry_address(registry),
        replicas=replicas,
        senders=senders,
    )


def require_manager(state: str) -> bool:
    """From `docker info --format '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}'`:
    False when no swarm is active (the runner starts one and leaves it afterwards), True on a
    manager; a worker, or a swarm that is locked, pending or broken, is refused."""
    node_state, _, control = state.strip().partition(" ")
    if node_state == "inactive":
        return False
    if node_state == "active" and control == "true":
        return True
    if node_state == "active":
        raise UsageError(
            "no swarm manager: this node is a swarm worker; run from a manager "
            "(docker node ls lists them)"
        )
    raise UsageError(f"no swarm manager: this node's swarm is {node_state or 'unknown'}")

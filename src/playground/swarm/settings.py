"""What `playground swarm` is asked for beyond the story's settings, checked before Docker is
touched: each mistake is one line (UsageError) and exit 2."""

from __future__ import annotations

import re
from collections.abc import Sequence
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


#: How a node is lost mid-run: drained by the manager, or its engine stopped.
LOSSES = ("drain", "stop")


@dataclass(frozen=True)
class LossPlan:
    """`--lose HOW:NODE --lose-at S`: which node goes, how, and when."""

    how: str  # drain or stop
    node: str
    at_s: float  # seconds after the senders start


def loss_plan(
    text: str | None, *, at_s: float, engines: bool, workers: tuple[str, ...], duration_s: float
) -> LossPlan | None:
    """`--lose drain:worker1` (or stop:NODE) checked: only on the three engines, only a
    worker (the manager takes the run's commands), within the run."""
    if text is None:
        return None
    how, _, node = text.partition(":")
    if how not in LOSSES or not node:
        raise UsageError(f"--lose takes HOW:NODE, HOW one of {', '.join(LOSSES)}; got {text!r}")
    if not engines:
        raise UsageError("--lose needs --engines: a node is lost from the three engines")
    if node not in workers:
        raise UsageError(f"--lose: {node!r} is not a worker; the workers are {', '.join(workers)}")
    if not 0 <= at_s < duration_s:
        raise UsageError(f"--lose-at must be within the run's {duration_s:g} s, got {at_s:g}")
    return LossPlan(how=how, node=node, at_s=at_s)


@dataclass(frozen=True)
class SwarmSettings:
    """The stack's shape and where its images come from."""

    registry: str | None  # HOST:PORT; None: the runner starts one locally and removes it
    replicas: int  # of the app
    senders: int  # open-loop senders, at rate/senders each
    engines: bool = False  # on the three engines of compose/swarmnodes.yml, with their registry
    lose: LossPlan | None = None  # a worker lost mid-run (--engines only)
    #: The nodes the senders may go to, one each in turn (--engines: the manager and the
    #: workers that are not to be lost); empty: the one engine of a single-node swarm.
    sender_nodes: tuple[str, ...] = ()

    @property
    def app_constraint(self) -> str | None:
        """On the three engines the app's replicas go to the workers, so the first sender
        (on the manager) shares no node with the app."""
        return "node.role==worker" if self.engines else None

    def sender_node(self, sender: int, *, app_on: Sequence[str] = ()) -> str | None:
        """The node whose engine runs sender `sender`: its node in turn, the nodes without a
        replica of the app (`app_on`) taken first; None: the one engine there is."""
        if not self.sender_nodes:
            return None
        nodes = sorted(self.sender_nodes, key=lambda n: n in app_on)  # stable: order kept
        return nodes[sender % len(nodes)]


def swarm_settings(
    *,
    registry: str | None,
    replicas: int,
    senders: int,
    engines: bool = False,
    nodes: tuple[str, ...] = (),
    lose: LossPlan | None = None,
) -> SwarmSettings:
    """The settings, or the first mistake as one line. `nodes`: the engines' hostnames,
    the manager first (--engines)."""
    if engines and registry is not None:
        raise UsageError(
            "--engines brings the engines' own registry (on 127.0.0.1:5000): leave out --registry"
        )
    if replicas < 1:
        raise UsageError(f"--replicas must be 1 or more, got {replicas}")
    if senders < 1:
        raise UsageError(f"--senders must be 1 or more, got {senders}")
    if engines:
        registry = LOCAL_REGISTRY
    return SwarmSettings(
        registry=None if registry is None else registry_address(registry),
        replicas=replicas,
        senders=senders,
        engines=engines,
        lose=lose,
        sender_nodes=tuple(n for n in nodes if lose is None or n != lose.node) if engines else (),
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

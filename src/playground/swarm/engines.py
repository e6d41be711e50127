"""Three Docker engines on one machine, joined as one swarm: a manager and two workers, each an
engine in a container of its own (compose/swarmnodes.yml, swarmnode/Dockerfile), with a
registry beside them on their network. Every command goes through `Docker.run` (printed first),
each node's through `docker exec` into its container, so a reader can repeat it by hand.

`python -m playground.swarm.engines up` starts them and joins the swarm (`make swarm-nodes`),
`down` removes them with their volumes (`make swarm-nodes-down`), whatever state they are in.
`playground swarm --engines` runs its stack on them (`for_run`): its swarm commands go to the
manager's engine over TCP (DOCKER_HOST), its images through the nodes' registry.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from playground.core.compose import Docker, DockerError

COMPOSE = "compose/swarmnodes.yml"
NETWORK = "playground-swarmnodes"
MANAGER = "manager"
WORKERS = ("worker1", "worker2")
#: Swarm's own port for joining a manager.
SWARM_PORT = 2377
#: Where each node's engine takes commands over TCP, on the nodes' network (entrypoint.sh).
ENGINE_PORT = 2375
POLL_S = 1.0
#: Docker's default CPU weight (`--cpu-shares`), where a node's container goes back after a run.
DEFAULT_CPU_SHARES = 1024


def container(node: str) -> str:
    """The container that holds a node's engine."""
    return f"playground-swarmnode-{node}"


def on(node: str, *argv: str) -> list[str]:
    """A docker command run by one node's engine."""
    return ["docker", "exec", container(node), "docker", *argv]


@dataclass(frozen=True)
class NodeState:
    """One node as the manager lists it."""

    hostname: str
    status: str  # Ready, Down, Unknown
    availability: str  # Active, Drain, Pause
    manager: bool


def node_states(docker: Docker) -> list[NodeState]:
    """Every node of the swarm, as its manager sees it now."""
    argv = on(
        MANAGER,
        *(
            "node",
            "ls",
            "--format",
            "{{.Hostname}} {{.Status}} {{.Availability}} {{.ManagerStatus}}",
        ),
    )
    states = []
    for line in docker.run(argv, quiet=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            states.append(NodeState(parts[0], parts[1], parts[2], manager=len(parts) > 3))
    return states


def _wait_ready(docker: Docker, *, nodes: int, timeout_s: float) -> list[NodeState]:
    deadline = time.monotonic() + timeout_s
    while True:
        states = node_states(docker)
        if sum(s.status == "Ready" for s in states) == nodes:
            return states
        if time.monotonic() > deadline:
            shown = ", ".join(f"{s.hostname} {s.status}" for s in states) or "none listed"
            raise DockerError(f"the swarm's {nodes} nodes not ready after {timeout_s:g} s: {shown}")
        time.sleep(POLL_S)


def up(docker: Docker, *, timeout_s: float = 180) -> list[NodeState]:
    """The engines started and healthy, the swarm made on the manager, the workers joined."""
    docker.up(COMPOSE, wait_timeout=int(timeout_s))
    address = docker.ip_address(container(MANAGER), network=NETWORK)
    if address is None:
        raise DockerError(f"{container(MANAGER)} has no address on {NETWORK}")
    docker.run(on(MANAGER, "swarm", "init", "--advertise-addr", address))
    token = docker.run(on(MANAGER, "swarm", "join-token", "--quiet", "worker")).stdout.strip()
    for worker in WORKERS:
        docker.run(on(worker, "swarm", "join", "--token", token, f"{address}:{SWARM_PORT}"))
    return _wait_ready(docker, nodes=1 + len(WORKERS), timeout_s=timeout_s)


def manager_engine(docker: Docker) -> Docker:
    """`docker` with its commands sent to the manager's engine (DOCKER_HOST), each printed
    with the DOCKER_HOST a reader sets to type it by hand."""
    address = docker.ip_address(container(MANAGER), network=NETWORK)
    if address is None:
        raise DockerError(f"{container(MANAGER)} has no address on {NETWORK}: make swarm-nodes")
    host = f"tcp://{address}:{ENGINE_PORT}"
    echo = docker.echo
    return replace(
        docker,
        env={**docker.env, "DOCKER_HOST": host},
        echo=lambda line: echo(f"DOCKER_HOST={host} {line}"),
    )


def _joined(docker: Docker) -> bool:
    """The three engines run and are joined: the manager lists every node Ready."""
    proc = docker.run(
        ["docker", "inspect", "--format", "{{.State.Running}}", container(MANAGER)],
        check=False,
        quiet=True,
    )
    if proc.stdout.strip() != "true":
        return False
    try:
        states = node_states(docker)
    except DockerError:
        return False
    return sum(s.status == "Ready" for s in states) == 1 + len(WORKERS)


@contextmanager
def for_run(docker: Docker, *, info: Callable[[str], None]) -> Iterator[Docker]:
    """The manager's engine for one run: the engines as `make swarm-nodes` left them, or
    started here, joined, and removed when the run ends (an interrupt included)."""
    if _joined(docker):
        info("the three engines of make swarm-nodes: used as they are, and left running")
        yield manager_engine(docker)
        return
    leftovers = docker.run(
        ["docker", "ps", "-aq", "--filter", f"name={container(MANAGER)}"], quiet=True
    ).stdout.strip()
    if leftovers:
        raise DockerError(
            f"{container(MANAGER)} is there but its swarm is not ready: "
            "make swarm-nodes-down, then run again"
        )
    try:
        docker.run(docker.compose(COMPOSE, "build"), timeout=900)
        up(docker)
        yield manager_engine(docker)
    finally:
        down(docker)


@contextmanager
def weighted(docker: Docker, nodes: Iterable[str], *, shares: int) -> Iterator[None]:
    """The containers of `nodes` at CPU weight `shares` on this machine's engine while the
    block runs, then back at Docker's default, an interrupt included. A weight ranks a
    container only among its siblings: a sender at the largest weight inside its node still
    waits behind the other nodes whenever its node does, so the node it runs on is raised too."""
    found = sorted(set(nodes))
    try:
        for node in found:
            docker.run(["docker", "update", "--cpu-shares", str(shares), container(node)])
        yield
    finally:
        for node in found:
            back = ["docker", "update", "--cpu-shares", str(DEFAULT_CPU_SHARES), container(node)]
            docker.run(back, check=False, quiet=True, shielded=True)


def down(docker: Docker) -> None:
    """The engines, their volumes (every image and container they held) and their network
    removed, whatever state they are in."""
    docker.down(COMPOSE)


#: The image the node-loss trial spreads over the nodes: any the machine has built will do.
TRIAL_IMAGE = "flask-playground/slow_api"
TRIAL_SERVICE = "playground-node-loss"


def _running_on(docker: Docker) -> list[str]:
    """The node of each of the trial service's tasks that runs now."""
    argv = on(
        MANAGER,
        *("service", "ps", TRIAL_SERVICE, "--filter", "desired-state=running"),
        *("--format", "{{.Node}} {{.CurrentState}}"),
    )
    out = docker.run(argv, quiet=True).stdout.splitlines()
    return [line.split()[0] for line in out if " Running" in line]


def _until(done: Callable[[], bool], *, timeout_s: float) -> float | None:
    """Seconds until `done()`, polled every 0.2 s; None past `timeout_s`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if done():
            return round(time.monotonic() - started, 1)
        time.sleep(0.2)
    return None


def node_loss(docker: Docker, *, how: str, node: str, replicas: int = 3) -> list[str]:
    """One trial on running engines: a service of `replicas`, spread over the nodes by Swarm's
    scheduler (the image loaded into the manager and pulled by the others from the nodes'
    registry), then `node` drained or its engine stopped; how long from then until the manager
    marks it, and until every replica runs again on the nodes left. The lines to print."""
    registry = "playground-registry:5000"
    pushed = f"{registry}/{TRIAL_IMAGE.rpartition('/')[2]}:node-loss"
    save = subprocess.Popen(["docker", "save", TRIAL_IMAGE], stdout=subprocess.PIPE)
    load = ["docker", "exec", "-i", container(MANAGER), "docker", "load"]
    subprocess.run(load, stdin=save.stdout, check=True, capture_output=True, timeout=300)
    save.wait(timeout=300)
    docker.run(on(MANAGER, "tag", TRIAL_IMAGE, pushed))
    docker.run(on(MANAGER, "push", pushed))
    docker.run(
        on(
            MANAGER,
            *("service", "create", "--detach", "--name", TRIAL_SERVICE),
            *("--replicas", str(replicas), pushed),
        )
    )
    placed = _until(lambda: len(_running_on(docker)) == replicas, timeout_s=180)
    where = sorted(_running_on(docker))
    if how == "drain":
        docker.run(on(MANAGER, "node", "update", "--availability", "drain", node))
        word, marked = "Drain", lambda: True
    else:
        docker.run(["docker", "stop", "--time", "1", container(node)])
        word = "Down"

        def marked() -> bool:
            return any(s.hostname == node and s.status == "Down" for s in node_states(docker))

    started = time.monotonic()
    seen = _until(marked, timeout_s=180)
    again = _until(
        lambda: node not in (r := _running_on(docker)) and len(r) == replicas, timeout_s=180
    )
    back = None if again is None else round(time.monotonic() - started, 1)
    return [
        f"{replicas} replicas running after {placed} s, on {', '.join(where)}",
        f"{how} {node}: marked {word} after {seen} s; {replicas} replicas running again "
        f"without it after {back} s, on {', '.join(sorted(_running_on(docker)))}",
    ]


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[3]
    docker = Docker(root=root, echo=lambda line: print(f"$ {line}", flush=True))
    if argv == ["up"]:
        try:
            states = up(docker)
        except DockerError as exc:
            print(f"swarm nodes: {exc}", file=sys.stderr)
            down(docker)
            return 1
        for s in states:
            print(f"{s.hostname}: {s.status}, {s.availability}{', manager' if s.manager else ''}")
        return 0
    if len(argv) == 3 and argv[0] == "node-loss" and argv[1] in ("drain", "stop"):
        try:
            up(docker)
            lines = node_loss(docker, how=argv[1], node=argv[2])
        finally:
            down(docker)
        print("\n".join(lines))
        return 0
    if argv == ["down"]:
        down(docker)
        return 0
    print(
        "usage: python -m playground.swarm.engines up|down|node-loss drain|stop NODE",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

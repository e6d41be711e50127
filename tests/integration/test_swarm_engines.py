"""Three Docker engines on this machine as one swarm (compose/swarmnodes.yml), for real: the
manager and two workers join and are ready; an image pushed once to the nodes' registry is
pulled by every node that runs a replica; a worker drained while the service runs has its task
moved to the others, the service still at its replicas; and afterwards nothing of it is left
(no container, network or volume), whatever the test found."""

from __future__ import annotations

import subprocess
import time

from playground.core.compose import Docker
from playground.swarm import engines
from tests.integration.conftest import ROOT, sh, wait_until

IMAGE = "flask-playground/slow_api"
PUSHED = "playground-registry:5000/slow_api:engines-test"
SERVICE = "engines-test"
REPLICAS = 3


def mine() -> dict[str, set[str]]:
    """The containers, networks and volumes of the engines' project, by name."""

    def names(*argv: str) -> set[str]:
        return {n for n in sh("docker", *argv).stdout.split() if "swarmnode" in n}

    return {
        "containers": names("ps", "-a", "--format", "{{.Names}}"),
        "networks": names("network", "ls", "--format", "{{.Name}}"),
        "volumes": names("volume", "ls", "--format", "{{.Name}}"),
    }


def on_manager(*argv: str) -> str:
    return sh(*engines.on(engines.MANAGER, *argv)).stdout


def tasks() -> list[tuple[str, str]]:
    """(node, current state) of each of the service's tasks that should be running."""
    out = on_manager(
        "service",
        "ps",
        SERVICE,
        "--filter",
        "desired-state=running",
        "--format",
        "{{.Node}} {{.CurrentState}}",
    )
    return [(line.split()[0], line.split()[1]) for line in out.splitlines() if line.strip()]


def running_on() -> list[str]:
    return [node for node, state in tasks() if state == "Running"]


def test_three_engines_share_one_service_and_a_drained_node_hands_it_on():
    assert not any(mine().values()), f"engines left from before: {mine()}"
    docker = Docker(root=ROOT)
    docker.run(docker.compose(engines.COMPOSE, "build"), timeout=900)
    try:
        states = engines.up(docker)
        assert sorted(s.hostname for s in states) == ["manager", "worker1", "worker2"]
        assert [s.hostname for s in states if s.manager] == ["manager"]
        # One push from the manager; every other node pulls from the nodes' registry.
        save = subprocess.Popen(["docker", "save", IMAGE], stdout=subprocess.PIPE)
        sh_load = subprocess.run(
            ["docker", "exec", "-i", engines.container(engines.MANAGER), "docker", "load"],
            stdin=save.stdout,
            capture_output=True,
            text=True,
            timeout=300,
        )
        save.wait(timeout=300)
        assert sh_load.returncode == 0, sh_load.stderr
        on_manager("tag", IMAGE, PUSHED)
        on_manager("push", PUSHED)
        on_manager(
            "service",
            "create",
            "--detach",
            "--name",
            SERVICE,
            "--replicas",
            str(REPLICAS),
            "--replicas-max-per-node",
            "1",
            PUSHED,
        )
        wait_until(lambda: len(running_on()) == REPLICAS, timeout=300, what="3 replicas")
        assert sorted(running_on()) == ["manager", "worker1", "worker2"]
        # Drained mid-service: its task leaves, and the service is back at its replicas
        # on the nodes left (one per node at most, so two).
        on_manager("service", "update", "--detach", "--replicas-max-per-node", "2", SERVICE)
        wait_until(lambda: len(running_on()) == REPLICAS, timeout=300, what="the update")
        on_manager("node", "update", "--availability", "drain", "worker1")
        wait_until(
            lambda: "worker1" not in running_on() and len(running_on()) == REPLICAS,
            timeout=300,
            what="the drained node's task moved",
        )
        drained = {s.hostname: s.availability for s in engines.node_states(docker)}
        assert drained["worker1"] == "Drain"
    finally:
        engines.down(docker)
    deadline = time.monotonic() + 60
    while any(mine().values()) and time.monotonic() < deadline:
        time.sleep(1)
    assert not any(mine().values()), f"left behind: {mine()}"

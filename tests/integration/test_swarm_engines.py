"""Three Docker engines on this machine as one swarm (compose/swarmnodes.yml), for real: the
manager and two workers join and are ready; an image pushed once to the nodes' registry is
pulled by every node that runs a replica; a worker drained while the service runs has its task
moved to the others, the service still at its replicas; and afterwards nothing of it is left
(no container, network or volume), whatever the test found."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from playground.core.compose import Docker
from playground.incident.held import was_held
from playground.incident.storyresults import StoryRun
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


def test_a_node_is_not_healthy_before_its_engine_answers():
    """`up --wait` goes on once every node is healthy, and `swarm init` follows at once: the
    health check must fail while the node's engine is not up (`docker info --format` exits 0
    then, and a swarm init once ran into an engine that was not there yet)."""
    sh("docker", "compose", "-f", engines.COMPOSE, "build", "manager", timeout=900)
    config = sh("docker", "compose", "-f", engines.COMPOSE, "config", "--format", "json").stdout
    node = json.loads(config)["services"][engines.MANAGER]
    kind, program, *args = node["healthcheck"]["test"]
    assert kind == "CMD"
    no_engine = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", program, node["image"], *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert no_engine.returncode != 0, no_engine.stdout + no_engine.stderr


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


PLAYGROUND = str(Path(sys.executable).with_name("playground"))


def pushed_tags() -> set[str]:
    out = sh("docker", "images", "--format", "{{.Repository}}:{{.Tag}}").stdout.split()
    return {t for t in out if t.startswith("127.0.0.1:5000/")}


def test_the_story_on_three_engines_spreads_its_stack_and_a_drained_worker_withholds_it(
    tmp_path: Path,
) -> None:
    assert not any(mine().values()), f"engines left from before: {mine()}"
    tags = pushed_tags()
    argv = [PLAYGROUND, "swarm", "--engines", "gunicorn-threads", "--quiet"]
    argv += ["--results-dir", str(tmp_path), "--rate", "20", "--replicas", "2", "--senders", "2"]
    argv += ["--before", "4", "--incident", "10", "--after", "8", "--wait-timeout", "300"]
    argv += ["--lose", "drain:worker1", "--lose-at", "6"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1500)
    said = done.stderr[-3000:] + done.stdout[-2000:]
    assert done.returncode in (0, 1), said
    (path,) = tmp_path.glob("*-swarm/results.json")
    (target,) = StoryRun.from_json(json.loads(path.read_text())).targets
    assert target.error is None and target.swarm is not None, said
    shape = target.swarm
    assert shape.nodes == 3
    # The app's replicas on the workers, one each; the senders on the manager and on the
    # worker that stays.
    assert shape.placement["flask_app"] == ["worker1", "worker2"], shape.placement
    assert [s.node for s in shape.senders] == ["manager", "worker2"]
    lost = shape.lost
    assert lost is not None and (lost.how, lost.node) == ("drain", "worker1")
    assert lost.at_s is not None and 4 <= lost.at_s <= 14, lost
    assert lost.marked_s is not None
    assert any(t.startswith("flask_app.") for t in lost.on_it), lost.on_it
    assert any("worker1" in e and "Shutdown" in e for e in lost.events), lost.events
    assert "Ready and Active again" in lost.restored
    # A task of the stack went with the node: the repeat has figures and no verdict.
    assert lost.affected and was_held(target) is None
    assert "withheld" in {f.code for f in target.findings}
    assert target.summary is not None and target.summary.attempts > 0
    assert (path.parent / "report.html").exists()
    deadline = time.monotonic() + 60
    while any(mine().values()) and time.monotonic() < deadline:
        time.sleep(1)
    assert not any(mine().values()), f"left behind: {mine()}"
    assert pushed_tags() == tags

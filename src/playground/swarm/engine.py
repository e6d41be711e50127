"""What every step of `playground swarm` shares: the stack's name, the run's context, and
reading and waiting on Docker's lists."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playground.core.compose import Docker
from playground.incident.settings import StorySettings
from playground.swarm.settings import SwarmSettings

#: The stack's name: its services are playground_NAME, its network playground_default.
STACK = "playground"
POLL_S = 1.0


@dataclass
class SwarmRun:
    """One target on the stack: where its files go and what the user is told."""

    docker: Docker
    settings: StorySettings
    swarm: SwarmSettings
    run_dir: Path
    info: Callable[[str], None]
    wait_timeout_s: float
    build: bool = True  # build the images before pushing them (--no-build: as they are)
    #: Where Swarm's own commands go (stack, service, node): the three engines' manager
    #: (--engines); None: this machine's engine, as `docker`. Builds and pushes stay on this
    #: machine's engine either way.
    manager: Docker | None = None

    @property
    def on_swarm(self) -> Docker:
        """The engine that manages the swarm."""
        return self.docker if self.manager is None else self.manager


def lines(docker: Docker, argv: list[str]) -> list[str]:
    """A docker command's output, one item a line, blank lines left out."""
    return [x for x in docker.run(argv, quiet=True).stdout.splitlines() if x.strip()]


#: How long Swarm is given to remove a removed service's task containers itself. It removes
#: a stack's running tasks in seconds, but can keep a stopped one's for longer.
GONE_S = 15.0


def containers_gone(run: SwarmRun, filters: list[str]) -> None:
    """Wait for Swarm to remove a removed service's task containers; any still there after
    GONE_S are removed here (a task container outlives its node's swarm otherwise)."""
    deadline = time.monotonic() + GONE_S
    for label in filters:
        argv = ["docker", "ps", "-aq", "--filter", label]
        while left := lines(run.on_swarm, argv):
            if time.monotonic() > deadline:
                run.on_swarm.run(["docker", "rm", "-f", "-v", *left], check=False, shielded=True)
                break
            time.sleep(POLL_S)

"""A node lost while the incident runs (`playground swarm --engines --lose drain:worker1`): the
node drained (`docker node update --availability drain`) or its engine stopped (`docker stop`
of its container) a set number of seconds after the senders start; then, every second until
they finish, what the swarm did: when the manager marked the node, and each task of the stack
that stopped, moved or started, with its node. Afterwards the node is brought back (made
active, or its engine started and rejoined) for the next repeat.

No sender runs on the node to be lost (swarm.settings: the senders go to the manager and the
other worker), so no sender's records go with it: what is measured is the service losing a
node, not the measurement losing a sender.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from playground.core.compose import DockerError
from playground.incident.swarmresults import NodeLost
from playground.swarm import engines
from playground.swarm.engine import STACK, SwarmRun, lines
from playground.swarm.settings import LossPlan

#: How often the swarm is read after the loss.
POLL_S = 1.0
#: How long a stopped engine is given to come back and rejoin before the next repeat.
BACK_S = 120.0


@dataclass(frozen=True)
class Task:
    """One task as `docker stack ps` lists it."""

    id: str
    name: str  # service.slot, the stack's prefix left out
    node: str
    desired: str
    current: str  # its state's first word: Running, Shutdown, Pending, ...


def tasks(run: SwarmRun) -> list[Task]:
    """Every task of the stack, the ones stopped included."""
    argv = ["docker", "stack", "ps", STACK, "--no-trunc", "--format"]
    argv += ["{{.ID}}|{{.Name}}|{{.Node}}|{{.DesiredState}}|{{.CurrentState}}"]
    found = []
    for line in lines(run.on_swarm, argv):
        parts = line.split("|")
        if len(parts) == 5:
            name = parts[1].strip().removeprefix("\\_").strip().removeprefix(f"{STACK}_")
            current = parts[4].split()[0] if parts[4].split() else ""
            found.append(Task(parts[0], name, parts[2].strip() or "-", parts[3], current))
    return found


@dataclass
class LossWatch:
    """The loss made on a thread of its own while the senders run, and what followed read
    every POLL_S; `finish` ends it, brings the node back and gives the record."""

    run: SwarmRun
    plan: LossPlan
    #: Set once every sender is running (:func:`playground.swarm.senderjobs.run_senders`).
    senders_started: threading.Event = field(default_factory=threading.Event)
    lost_wall: float | None = None
    marked_s: float | None = None
    on_it: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    failed: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> LossWatch:
        self._thread = threading.Thread(target=self._watch, name="node-loss", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        try:
            while not self.senders_started.wait(0.5):
                if self._stop.is_set():
                    return
            if self._stop.wait(self.plan.at_s):
                return
            before = {t.id: t for t in tasks(self.run)}
            self.on_it = sorted(
                t.name
                for t in before.values()
                if t.node == self.plan.node and t.current == "Running"
            )
            self.lost_wall = time.time()
            started = time.monotonic()
            self._lose()
            while not self._stop.wait(POLL_S):
                since = time.monotonic() - started
                if self.marked_s is None and self._marked():
                    self.marked_s = round(since, 1)
                    self.events.append(f"+{since:.1f} s: the manager lists {self._word()}")
                for t in tasks(self.run):
                    was = before.get(t.id)
                    if was is None or (was.current, was.desired) != (t.current, t.desired):
                        self.events.append(
                            f"+{since:.1f} s: {t.name} on {t.node}: {t.current} "
                            f"(desired {t.desired})"
                        )
                    before[t.id] = t
        except DockerError as exc:
            self.failed = str(exc).splitlines()[0]

    def _lose(self) -> None:
        node = self.plan.node
        if self.plan.how == "drain":
            argv = ["docker", "node", "update", "--availability", "drain", node]
            self.run.on_swarm.run(argv)
        else:
            self.run.docker.run(["docker", "stop", "--time", "1", engines.container(node)])

    def _word(self) -> str:
        return f"{self.plan.node} {'Drain' if self.plan.how == 'drain' else 'Down'}"

    def _marked(self) -> bool:
        for s in engines.node_states(self.run.docker):
            if s.hostname == self.plan.node:
                return s.availability == "Drain" if self.plan.how == "drain" else s.status == "Down"
        return False

    def finish(self, *, t0_wall: float | None) -> NodeLost:
        """The watch ended and the node brought back; what happened, on the run's clock."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        running: dict[str, int] = {}
        try:
            for t in tasks(self.run):
                # A task on a stopped engine stays Running in the manager's list, meant to
                # shut down: not counted.
                if t.current == "Running" and t.desired == "Running":
                    service = t.name.rpartition(".")[0] or t.name
                    running[service] = running.get(service, 0) + 1
        except DockerError as exc:
            self.failed = self.failed or str(exc).splitlines()[0]
        restored = self._restore() if self.lost_wall is not None else "never lost"
        at_s = None
        if self.lost_wall is not None and t0_wall is not None:
            at_s = round(self.lost_wall - t0_wall, 1)
        return NodeLost(
            how=self.plan.how,
            node=self.plan.node,
            at_s=at_s,
            marked_s=self.marked_s,
            on_it=self.on_it,
            events=self.events,
            running_after=dict(sorted(running.items())),
            restored=restored,
            failed=self.failed,
        )

    def _restore(self) -> str:
        """The node back for the next repeat: made active, or its engine started and Ready."""
        node = self.plan.node
        started = time.monotonic()
        if self.plan.how == "stop":
            self.run.docker.run(["docker", "start", engines.container(node)], shielded=True)
        else:
            argv = ["docker", "node", "update", "--availability", "active", node]
            self.run.on_swarm.run(argv, shielded=True)
        deadline = started + BACK_S
        while time.monotonic() < deadline:
            try:
                states = {s.hostname: s for s in engines.node_states(self.run.docker)}
                state = states.get(node)
                if state is not None and state.status == "Ready" and state.availability == "Active":
                    return f"{node} Ready and Active again after {time.monotonic() - started:.0f} s"
            except DockerError:
                pass
            time.sleep(POLL_S)
        raise DockerError(f"{node} not back within {BACK_S:g} s: make swarm-nodes-down")

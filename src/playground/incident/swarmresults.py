"""What a story run on a Docker Swarm stack keeps of the stack (`playground swarm`): its
shape and each sender's own record (:class:`playground.incident.storyresults.StoryTarget`'s
`swarm`). The run's figures are the story's, drawn from the senders' records merged by
scheduled time (:mod:`playground.swarm.senders`)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.jsonmodel import doc
from playground.incident.targetresults import GeneratorCheck


@dataclass(frozen=True)
class SenderRecord:
    """One sender of a run on several senders: what it sent and its own self-check."""

    sender: int = doc("the sender's number, from 0 (its visit v is the run's v x senders + it)", 0)
    visits: int = doc("the visits it was to send", 0)
    attempts: int = doc("the attempts it made, reloads included", 0)
    start_s: float = doc(
        "when its second 0 came, s after the earliest sender's (wall clock): its times are "
        "moved on by this much in the merged run",
        0.0,
    )
    node: str | None = doc("the swarm node its task ran on", omit_none=True)
    check: GeneratorCheck = doc(
        "its own self-check: did it keep its schedule?", factory=GeneratorCheck
    )


@dataclass(frozen=True)
class NodeLost:
    """A node lost while the load ran (`--lose`): when, what was on it, what the swarm did."""

    how: str = doc(
        "`drain` (docker node update --availability drain) or `stop` (its engine stopped)", ""
    )
    node: str = doc("the node lost", "")
    at_s: float | None = doc("when, s on the run's clock (the incident begins at `before_s`)")
    marked_s: float | None = doc(
        "s from the loss until the manager listed the node Drain or Down; none: not while "
        "the load ran"
    )
    on_it: list[str] = doc(
        "the stack's tasks (service.slot) running on the node when it was lost", factory=list
    )
    events: list[str] = doc(
        "each change the swarm made after the loss, s after it: a task stopped, moved or "
        "started, with its node",
        factory=list,
    )
    running_after: dict[str, int] = doc(
        "each service's tasks running and meant to, as the manager listed them when the "
        "senders finished",
        factory=dict,
    )
    restored: str = doc("how the node came back for the next repeat", "")
    failed: str | None = doc("why the swarm could not be read throughout, if it could not")

    @property
    def affected(self) -> bool:
        """Some task of the stack ran on the node when it went."""
        return bool(self.on_it)


@dataclass(frozen=True)
class SwarmShape:
    """The stack a target ran on: nodes, replicas, senders, and what Swarm could not take."""

    nodes: int = doc("nodes in the swarm", 0)
    replicas: int = doc("replicas of the app behind the proxy", 0)
    app: str = doc("the service replicated", "")
    registry: str = doc("where every node pulled the images from", "")
    senders: list[SenderRecord] = doc("one per sender, each at rate / senders", factory=list)
    removed: list[str] = doc("each compose setting the stack file left out, and why", factory=list)
    stack_file: str = doc("the stack file deployed, in the run's folder", "")
    placement: dict[str, list[str]] = doc(
        "the node of each of a service's running tasks once the stack was ready, by service",
        factory=dict,
    )
    lost: NodeLost | None = doc("a node lost mid-run (`--lose`)", omit_none=True)

    @property
    def kept_schedule(self) -> int:
        """How many senders kept their schedule."""
        return sum(s.check.valid for s in self.senders)

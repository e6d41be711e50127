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
class SwarmShape:
    """The stack a target ran on: nodes, replicas, senders, and what Swarm could not take."""

    nodes: int = doc("nodes in the swarm", 0)
    replicas: int = doc("replicas of the app behind the proxy", 0)
    app: str = doc("the service replicated", "")
    registry: str = doc("where every node pulled the images from", "")
    senders: list[SenderRecord] = doc("one per sender, each at rate / senders", factory=list)
    removed: list[str] = doc("each compose setting the stack file left out, and why", factory=list)
    stack_file: str = doc("the stack file deployed, in the run's folder", "")

    @property
    def kept_schedule(self) -> int:
        """How many senders kept their schedule."""
        return sum(s.check.valid for s in self.senders)

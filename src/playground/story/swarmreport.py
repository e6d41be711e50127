"""How the story's report shows a run on a Docker Swarm stack (`playground swarm`): the
stack's shape and each sender's own check, and only the users' figures, saying why the
server's side is left out."""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.notation import DASH
from playground.core.odds import Frequency
from playground.incident.storyresults import StoryTarget
from playground.incident.swarmresults import SwarmShape
from playground.report.document import Block, BulletList, Paragraph, Table

ON_STACK = (
    "Measured from the users' side only: on a Swarm stack the proxy and the app run as tasks "
    "on whichever nodes Swarm picks, and the playground samples none of them (no proxy log, no "
    "calls counted at the third party, no listen queue, threads or memory), so those columns "
    "are left out. The users' figures are the senders' records merged by scheduled time."
)


def all_on_stack(targets: Sequence[StoryTarget]) -> bool:
    """A run on a stack: some target ran on one, and every other failed before it could."""
    return any(t.swarm is not None for t in targets) and all(
        t.swarm is not None or t.error for t in targets
    )


def shape_line(shape: SwarmShape) -> str:
    """One line: nodes, replicas, senders and whether they kept their schedule."""
    kept = Frequency(shape.kept_schedule, len(shape.senders))
    return (
        f"On Docker Swarm: {shape.nodes} node(s), {shape.replicas} replica(s) of "
        f"{shape.app}, {len(shape.senders)} sender(s); {kept.k} of {kept.n} kept their "
        f"schedule; images from the registry {shape.registry}."
    )


def lead(targets: Sequence[StoryTarget]) -> list[Block]:
    """Under the settings: the stack the first target ran on (each target's section gives
    its own)."""
    first = next((t.swarm for t in targets if t.swarm is not None), None)
    return [] if first is None else [Paragraph(shape_line(first))]


def target_blocks(t: StoryTarget) -> list[Block]:
    """The stack's shape, each sender's check, and what the stack file left out."""
    if t.swarm is None:
        return []
    shape = t.swarm
    rows = [
        [
            str(s.sender),
            s.node or DASH,
            f"{s.visits}",
            f"{s.attempts}",
            f"{s.start_s * 1000:.1f}",
            "valid" if s.check.valid else "INVALID: " + "; ".join(s.check.reasons),
            _ms(s.check.send_lag_p99_s),
        ]
        for s in shape.senders
    ]
    head = ["sender", "node", "visits", "attempts", "started after the first (ms)", "check"]
    blocks: list[Block] = [
        Paragraph(shape_line(shape)),
        Table([*head, "send lag p99 (ms)"], rows),
    ]
    if shape.removed:
        blocks += [
            Paragraph(f"What the stack file ({shape.stack_file}) left out of the compose files:"),
            BulletList(shape.removed),
        ]
    return blocks


def _ms(seconds: float | None) -> str:
    return DASH if seconds is None else f"{seconds * 1000:.1f}"

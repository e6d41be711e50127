"""How the story's report shows a run on a Docker Swarm stack (`playground swarm`): the
stack's shape and each sender's own check, and only the users' figures, saying why the
server's side is left out."""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.notation import DASH
from playground.core.odds import Frequency
from playground.incident.storyresults import StoryTarget
from playground.incident.swarmresults import NodeLost, SwarmShape
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
    if shape.placement:
        where = "; ".join(f"{s} on {', '.join(n)}" for s, n in shape.placement.items())
        blocks.append(Paragraph(f"Where the stack ran once ready: {where}."))
    if shape.lost is not None:
        blocks += lost_blocks(shape.lost)
    if shape.removed:
        blocks += [
            Paragraph(f"What the stack file ({shape.stack_file}) left out of the compose files:"),
            BulletList(shape.removed),
        ]
    return blocks


def lost_blocks(lost: NodeLost) -> list[Block]:
    """The node lost: when, what was on it, what the swarm did, and how it came back."""
    gone = "drained" if lost.how == "drain" else "had its engine stopped"
    when = "" if lost.at_s is None else f" at {lost.at_s:g} s of the run"
    marked = (
        "the manager did not list it so while the load ran"
        if lost.marked_s is None
        else f"the manager listed it {'Drain' if lost.how == 'drain' else 'Down'} "
        f"{lost.marked_s:g} s later"
    )
    on_it = ", ".join(lost.on_it) or "no task of the stack"
    after = ", ".join(f"{s} {n}" for s, n in lost.running_after.items()) or DASH
    verdict = (
        "this repeat's verdict is withheld"
        if lost.affected
        else "nothing of the stack was on it: the verdict stands"
    )
    blocks: list[Block] = [
        Paragraph(
            f"Node lost: {lost.node} {gone}{when}, with {on_it} on it; {marked}; {verdict}. "
            f"Running when the senders finished: {after}. {lost.restored}."
        )
    ]
    if lost.events:
        blocks.append(BulletList(lost.events))
    if lost.failed:
        blocks.append(Paragraph(f"The swarm could not be read throughout: {lost.failed}"))
    return blocks


def _ms(seconds: float | None) -> str:
    return DASH if seconds is None else f"{seconds * 1000:.1f}"

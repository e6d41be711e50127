"""How the story's report shows a service measured by its URL (`--url`): what the incident
was, and only the users' figures, saying that nothing was sampled on the server's side
rather than showing empty columns."""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.notation import DASH
from playground.incident.outside import OutsideTarget
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.report.document import Block, CodeBlock, Paragraph
from playground.story import headline

#: The headline's columns measured on the server's side (or from the story's own pool).
SERVER_SIDE = (
    *headline.WAITS[-3:],  # nginx's 499s, and the calls counted at the third party
    *(c for c in headline.SERVER if c not in ("target", "peak in flight", headline.SPLIT)),
)
NOT_SAMPLED = (
    "Measured from the users' side only (by its URL, or a by-hand generator run): the "
    "playground did not bring this service up, so nothing was sampled on its side (no proxy log, no calls counted at the dependency, no listen "
    "queue, threads or memory) and those columns are left out; every figure here is the "
    "users', as the load generator saw them."
)


def all_outside(targets: Sequence[StoryTarget]) -> bool:
    return bool(targets) and all(t.outside is not None for t in targets)


def summary_tables(rows: Sequence[dict[str, str]], *, why: str = NOT_SAMPLED) -> list[Block]:
    """The headline without the server's side, and why it is left out."""
    return [Paragraph(why), *headline.tables(rows, leave_out=SERVER_SIDE)]


def _incident(o: OutsideTarget) -> str:
    if o.mechanism == "delay-proxy":
        return f"the delay proxy ({o.dependency}) added {o.added_delay_s:g} s to every call"
    if o.mechanism == "netem":
        return f"tc netem delayed the packets to the dependency by {o.added_delay_s:g} s"
    if o.mechanism == "by-hand":
        return f"the generator's control request ({o.dependency}) added {o.added_delay_s:g} s"
    if o.mechanism == "commands":
        return "the reader's --incident-start command ran (its output is in the target's section)"
    return "nothing was done to the service (no incident was made)"


def _network(o: OutsideTarget | None) -> str:
    return f" (from the network {o.network})" if o and o.network != "-" else ""


def settings(run: StoryRun) -> Paragraph:
    """The users and the incident, as a `--url` run made them."""
    s = run.story
    first = run.targets[0].outside if run.targets else None
    incident = _incident(first) if first else DASH
    return Paragraph(
        f"{s.rate:g} visits/s ({s.arrival}, seed {s.seed}) for {s.duration:g} s against "
        f"{first.url if first else '-'}{_network(first)}; "
        f"from second {s.before_s:g} for {s.incident_s:g} s {incident}. A user gives up "
        f"after {s.timeout:g} s, waits {s.refresh_delay:g} s and reloads, up to "
        f"{s.max_attempts} attempts."
    )


def target_blocks(t: StoryTarget) -> list[Block]:
    """The incident's own commands and what they printed."""
    if t.outside is None or not t.outside.commands:
        return []
    return [
        CodeBlock(
            "\n".join(
                f"# {c.when}, {c.at_s:g} s into the run, exit {c.exit}\n$ {c.command}\n"
                f"{c.output.rstrip()}"
                for c in t.outside.commands
            )
        )
    ]

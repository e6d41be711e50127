"""A service the story did not bring up, measured by its URL (`playground story --url`): what
the story's results keep of it (:class:`playground.incident.storyresults.StoryTarget`'s `outside`).
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.jsonmodel import doc


@dataclass(frozen=True)
class IncidentCommand:
    """A command of the reader's own run at the incident's start or end (--incident-start,
    --incident-end), and what it printed."""

    when: str = doc("`start` or `end`", "")
    command: str = doc("the command, as given", "")
    at_s: float | None = doc("seconds into the run it was started (the generator's clock)")
    exit: int | None = doc("its exit status (None: it could not be started or timed out)")
    output: str = doc("what it printed (stdout, then stderr; the end of it)", "")


@dataclass(frozen=True)
class OutsideTarget:
    """A service the playground did not bring up, measured by its URL (--url): nothing on the
    server's side was sampled (no nginx log, no threads, no queues)."""

    url: str = doc("the page the users asked for", "")
    network: str = doc("the Docker network the generator ran on (`host`: the host's)", "host")
    mechanism: str = doc(
        "what made the incident: `delay-proxy`, `netem`, `commands`, `by-hand` or `none`", "none"
    )
    dependency: str | None = doc(
        "--slow-dependency NAME=URL (the proxy's name and its target); by hand: the control URL"
    )
    added_delay_s: float | None = doc("seconds the delay proxy added to each call during it")
    commands: list[IncidentCommand] = doc("--incident-start/--incident-end", factory=list)

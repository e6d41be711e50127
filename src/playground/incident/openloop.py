"""The playground's open-loop generator (loadgen/openloop.py, in the image
`flask-playground/openloop`): its command line, the options that describe the story's users
and the incident's control request, as every run of the story sends them (on one host or as
several senders on a swarm). What it writes is read by :mod:`playground.incident.analysis`.
"""

from __future__ import annotations

from playground.core.target import plain_decimal as num
from playground.incident.settings import StorySettings

#: Where the image holds the generator.
OPENLOOP = "/usr/local/bin/openloop.py"
#: slow_api's port (compose/common.yml), where the incident's control request goes.
API_PORT = 4000
#: The generator's CPU weight (`docker run --cpu-shares`), wherever it runs: Docker's largest,
#: so it goes first when the two cores are contended. A starved generator would measure itself
#: (its self-check would catch it and mark the run invalid).
GENERATOR_CPU_SHARES = 262144


def openloop(
    url: str, *, rate: float, duration: float, options: list[str], out: str | None = None
) -> list[str]:
    """The generator's command line, for every run of it (the story's, in the load-generator
    container on the target's network, and each Swarm sender's): `rate` visits/s to `url` for
    `duration` s, writing its attempts to `out` (without one, its caller adds where)."""
    head = ["python", OPENLOOP, "--url", url, "--rate", num(rate), "--duration", num(duration)]
    return [*head, *options, *(["--out", out] if out is not None else [])]


def users(s: StorySettings) -> list[str]:
    """The generator's options for the story's users: arrivals, patience, reloads."""
    return [
        *("--arrival", s.arrival, "--seed", str(s.seed)),
        *("--timeout", num(s.timeout), "--refresh-delay", num(s.refresh_delay)),
        *("--refresh-backoff", num(s.refresh_backoff), "--max-attempts", str(s.max_attempts)),
        *("--engine", s.engine),
    ]


def incident_url(s: StorySettings, *, host: str = "slow_api") -> str:
    """The control request that starts the incident at the third party."""
    return (
        f"http://{host}:{API_PORT}/control/slowdown"
        f"?extra={num(s.extra_delay)}&seconds={num(s.incident_s)}"
    )

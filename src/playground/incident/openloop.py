"""The playground's open-loop generator (loadgen/openloop.py, in the image
`flask-playground/openloop`): its command line. What it writes is read by
:mod:`playground.incident.analysis`; the options that describe the story's users are the
story's (:func:`playground.story.plan.users`).
"""

from __future__ import annotations

from playground.core.target import plain_decimal as num

#: Where the image holds the generator.
OPENLOOP = "/usr/local/bin/openloop.py"


def openloop(url: str, *, rate: float, duration: float, options: list[str], out: str) -> list[str]:
    """The generator's command line, inside the load-generator container on the target's
    network: `rate` visits/s to `url` for `duration` s, writing its attempts to `out`."""
    head = ["python", OPENLOOP, "--url", url, "--rate", num(rate), "--duration", num(duration)]
    return [*head, *options, "--out", out]

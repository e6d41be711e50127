"""What the story sends: the generator's and ab's command lines, and the incident's request.

The incident behind the uWSGI demo, scaled down to this machine's 2 cores. Its ratios:
640 threads for 300 requests/s, a third of them busy normally, a 2 s response during the
incident (300 x 2 = 600 in flight: the pool nearly full). Scaled by 5: 128 threads (2
processes, one per core, x 64) for 60 visits/s. A third busy normally is 128 / 3 / 60 = 0.71 s
per request, so the upstream normally answers in 0.7 s; during the incident it takes 2 s
(60 x 2 = 120 of 128 threads). The gevent targets get the same 2 processes with 1000
greenlets each. Users give up after a few seconds (4 s), wait 1 s and reload, up to 3
attempts. The settings are :class:`playground.incident.settings.StorySettings`; the targets are the
registry's (kind `story`, :func:`playground.core.scenarios.story_targets`).
"""

from __future__ import annotations

import math

from playground.core.target import Target
from playground.core.target import plain_decimal as num
from playground.core.tools.abreport import AbTool
from playground.incident.openloop import API_PORT as API_PORT
from playground.incident.openloop import incident_url as incident_url
from playground.incident.openloop import openloop
from playground.incident.openloop import users as users
from playground.incident.settings import StorySettings

STATS_PORT = 1717
STUB_STATUS_PORT = 8081
APP_PORT = 3000
# ab's inactivity limit through the incident: far beyond any wait.
AB_INACTIVITY_S = 30


def openloop_args(s: StorySettings, target: Target, *, out: str) -> list[str]:
    """The generator through the incident: the story's users, the control request at
    `before_s`."""
    return openloop(
        target.url(delay=s.normal_delay),
        rate=s.rate,
        duration=s.duration,
        options=[*users(s), "--at", f"{num(s.before_s)}:POST:{incident_url(s)}"],
        out=out,
    )


def ab_args(s: StorySettings, target: Target, *, gnuplot: str) -> list[str]:
    """ab through the whole schedule: -t the story's duration, -c the closed loop's
    connections, and a request cap of twice what the loop could send at the normal delay."""
    c = s.closed_loop_concurrency
    cap = max(c, math.ceil(2 * c / max(s.normal_delay, 0.01) * s.duration))
    return AbTool().command(
        url=target.url(delay=s.normal_delay),
        requests=cap,
        concurrency=c,
        timeout_s=AB_INACTIVITY_S,
        duration_s=s.duration,
        per_request_path=gnuplot,
        time_limit=True,
    )

"""The companion demos (`demos/`): other write-ups' experiments, registered with the runner.

`playground run --demos` (or `make demos`) runs them; `make bench` does not. Each demo is a
`Target` with kind "demo", so it is listed, run and reported like a scenario.
"""

from __future__ import annotations

from playground.scenarios import Target, register

DEMOS: tuple[Target, ...] = ()

register(*DEMOS)

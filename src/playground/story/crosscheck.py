"""An independent check of the open-loop generator: the same load from oha, compared.

oha (Rust, `-q RATE --latency-correction`) schedules requests at a fixed rate and counts
each one's latency from its scheduled time, as `openloop.py --no-refresh --arrival constant`
does. Both are run on the same target at the same rates, one after the other on one bring-up;
their goodput and their 2xx answers' latency p50 and p99 should agree within
:data:`TOLERANCE`, or the report (its table, below) says where they do not.
"""

from __future__ import annotations

from collections import Counter

from playground.core.notation import DASH
from playground.core.target import Target, plain_decimal
from playground.core.tools.oha import OhaReport
from playground.incident.analysis import OK, GeneratorOutput, percentile
from playground.incident.openloop import openloop
from playground.incident.settings import StorySettings
from playground.incident.storyresults import CrossCheck
from playground.incident.targetresults import ToolFigures
from playground.report.document import Block, CodeBlock, Heading, Paragraph, Table
from playground.story.cells import error, ms

OHA_IMAGE = "flask-playground/oha"
OHA_COMPOSE = "compose/oha.yml"
#: Rates offered, as shares of the thread pool's capacity at the check's delay (Little's law,
#: workers x threads / delay): below it, at it, above it.
SHARES = (0.5, 1.0, 1.5)

#: Two tools measuring the same load agree where each figure is within 10% of the other's
#: (and latencies within 5 ms, below which a second's tick of either clock decides).
TOLERANCE = 0.10
LATENCY_FLOOR_S = 0.005


def openloop_figures(output: GeneratorOutput, *, duration_s: float) -> ToolFigures:
    """The generator's attempts as the figures oha reports: every attempt of a run without
    refreshes, the 2xx among them, their latency from the intended send."""
    ok = [a for a in output.attempts if a.outcome == OK]
    latencies = [a.latency for a in ok]
    return ToolFigures(
        tool="openloop",
        requests=len(output.attempts),
        ok=len(ok),
        duration_s=duration_s,
        latency_p50_s=percentile(latencies, 50),
        latency_p99_s=percentile(latencies, 99),
        errors=dict(Counter(a.kind for a in output.attempts if a.outcome != OK)),
    )


def oha_figures(report: OhaReport, *, duration_s: float) -> ToolFigures:
    """oha's report as the same figures, to set beside the generator's."""
    return ToolFigures(
        tool="oha",
        requests=report.requests,
        ok=report.ok,
        duration_s=duration_s,
        latency_p50_s=report.latency_p50_s,
        latency_p99_s=report.latency_p99_s,
        errors=dict(report.errors),
    )


def _apart(a: float | None, b: float | None, *, floor: float = 0.0) -> bool:
    if a is None or b is None:
        return a is not b
    return abs(a - b) > max(floor, TOLERANCE * max(abs(a), abs(b)))


def differences(a: ToolFigures, b: ToolFigures) -> list[str]:
    """Where two tools' figures for the same load disagree, one sentence each."""
    out = []
    if _apart(a.goodput_per_s, b.goodput_per_s):
        out.append(
            f"goodput {a.goodput_per_s:.1f}/s ({a.tool}) against {b.goodput_per_s:.1f}/s ({b.tool})"
        )
    for name in ("latency_p50_s", "latency_p99_s"):
        x, y = getattr(a, name), getattr(b, name)
        if _apart(x, y, floor=LATENCY_FLOOR_S):
            out.append(f"{name[8:11]} {ms(x)} ({a.tool}) against {ms(y)} ({b.tool})")
    return out


def openloop_args(
    s: StorySettings, target: Target, *, rate: float, delay: float, duration: float, out: str
) -> list[str]:
    """The generator as oha runs: constant arrivals at `rate`, nobody reloads, the third party
    at `delay` throughout."""
    options = ["--arrival", "constant", "--timeout", plain_decimal(s.timeout), "--no-refresh"]
    options += ["--engine", s.engine]
    return openloop(target.url(delay=delay), rate=rate, duration=duration, options=options, out=out)


def rates(*, pool: int, delay: float) -> list[float]:
    """Below, at and above the capacity of a pool of `pool` threads at `delay`."""
    return [round(share * pool / delay, 1) for share in SHARES]


# --- in the report ---------------------------------------------------------------------------
CROSS_COLUMNS = (
    "target",
    "offered/s",
    "goodput/s: openloop | oha",
    "p50: openloop | oha",
    "p99: openloop | oha",
    "errors: openloop | oha",
    "agree (10%)",
)


def crosscheck_row(c: CrossCheck) -> list[str]:
    if c.error or c.openloop is None or c.oha is None:
        return [c.target, f"{c.rate:g}", error(c.error), *([DASH] * 4)]
    a, b = c.openloop, c.oha
    return [
        c.target,
        f"{c.rate:g}",
        f"{a.goodput_per_s:.1f} | {b.goodput_per_s:.1f}",
        f"{ms(a.latency_p50_s)} | {ms(b.latency_p50_s)}",
        f"{ms(a.latency_p99_s)} | {ms(b.latency_p99_s)}",
        f"{a.requests - a.ok} | {b.requests - b.ok}",
        "yes" if not c.differences else "NO: " + "; ".join(c.differences),
    ]


def crosscheck_blocks(checks: list[CrossCheck]) -> list[Block]:
    commands = [cmd for c in checks for cmd in c.commands[:2]][:2]
    return [
        Heading(2, "The generator against oha"),
        Paragraph(
            "The same load from the playground's generator (openloop.py --no-refresh, constant "
            "arrivals) and from oha (-q RATE --latency-correction, a connection per request), "
            "one after the other on one bring-up, the servers drained in between. Goodput: 2xx "
            "answers over the schedule's length; latency of the 2xx answers from their "
            "scheduled send. They agree where each figure is within 10% (latency: or 5 ms)."
        ),
        Table(CROSS_COLUMNS, [crosscheck_row(c) for c in checks]),
        CodeBlock("\n".join(commands)),
    ]

"""An independent check of the open-loop generator: the same load from oha, compared.

oha (Rust, `-q RATE --latency-correction`) schedules requests at a fixed rate and counts
each one's latency from its scheduled time, as `openloop.py --no-refresh --arrival constant`
does. Both are run on the same target at the same rates, one after the other on one bring-up;
their goodput and their 2xx answers' latency p50 and p99 should agree within
:data:`TOLERANCE`, or the report says where they do not.
"""

from __future__ import annotations

from playground.story.analysis import OK, GeneratorOutput, percentile
from playground.storymodel import ToolFigures

#: Two tools measuring the same load agree where each figure is within 10% of the other's
#: (and latencies within 5 ms, below which a second's tick of either clock decides).
TOLERANCE = 0.10
LATENCY_FLOOR_S = 0.005


def openloop_figures(output: GeneratorOutput, *, duration_s: float) -> ToolFigures:
    """The generator's attempts as the figures oha reports: every attempt of a run without
    refreshes, the 2xx among them, their latency from the intended send."""
    ok = [a for a in output.attempts if a.outcome == OK]
    errors: dict[str, int] = {}
    for a in output.attempts:
        if a.outcome != OK:
            key = f"http {a.status}" if a.outcome == "status" else a.outcome
            errors[key] = errors.get(key, 0) + 1
    latencies = [a.latency for a in ok]
    return ToolFigures(
        tool="openloop",
        requests=len(output.attempts),
        ok=len(ok),
        duration_s=duration_s,
        latency_p50_s=percentile(latencies, 50),
        latency_p99_s=percentile(latencies, 99),
        errors=errors,
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

            def show(v: float | None) -> str:
                return "-" if v is None else f"{1000 * v:.0f} ms"

            out.append(f"{name[8:11]} {show(x)} ({a.tool}) against {show(y)} ({b.tool})")
    return out

"""oha, the independent open-loop tool of the story's cross-check: its command line and its JSON
report, reduced to :class:`OhaReport` (the story compares it with its own generator's in
:mod:`playground.story.crosscheck`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from playground.core.tools.output import LoadOutputError, LoadSettingsError, whole_seconds


@dataclass(frozen=True)
class OhaReport:
    """What oha's JSON report says of a run: the 2xx answers, what the rest ended in (its own
    words, a non-2xx status as `http CODE`) and the 2xx answers' latency percentiles, s."""

    ok: int
    errors: dict[str, int]
    latency_p50_s: float | None
    latency_p99_s: float | None

    @property
    def requests(self) -> int:
        """Every request oha ended: answered, failed or timed out."""
        return self.ok + sum(self.errors.values())


def oha_command(
    *, url: str, rate: float, duration_s: float, timeout_s: float, connections: int
) -> list[str]:
    """oha as an open loop: `-q` a fixed query rate, `--latency-correction` to count latency
    from each request's scheduled time (no coordinated omission), `-c` connections enough that
    they never cap it, `--disable-keepalive` (a connection per request, as openloop.py opens),
    `-w` to wait for the requests still running at the end rather than abort them."""
    if rate <= 0 or duration_s <= 0 or timeout_s <= 0 or connections < 1:
        raise LoadSettingsError(
            f"oha needs a rate, a duration and a timeout above 0 and a connection, got "
            f"{rate}/s, {duration_s} s, {timeout_s} s, -c {connections}"
        )
    return [
        "oha",
        "--no-tui",
        "--output-format",
        "json",
        "-q",
        f"{rate:g}",
        "-z",
        f"{whole_seconds(value=duration_s, what='duration_s')}s",
        "-w",
        "-c",
        str(connections),
        "--latency-correction",
        "--disable-keepalive",
        "-t",
        f"{timeout_s:g}s",
        url,
    ]


def oha_report(json_text: str) -> OhaReport:
    """oha's JSON report (`--output-format json`): its status codes, its errors and its latency
    percentiles (seconds, over the requests that got an answer)."""
    try:
        data = json.loads(json_text)
        codes = {int(k): int(v) for k, v in (data.get("statusCodeDistribution") or {}).items()}
        errors = {str(k): int(v) for k, v in (data.get("errorDistribution") or {}).items()}
        percentiles = data.get("latencyPercentiles") or {}
    except (ValueError, TypeError, AttributeError) as exc:
        raise LoadOutputError(f"oha printed no JSON report: {exc}") from None
    ok = sum(n for code, n in codes.items() if 200 <= code < 300)
    errors.update({f"http {c}": n for c, n in codes.items() if not 200 <= c < 300})

    def seconds(key: str) -> float | None:
        value = percentiles.get(key)
        return float(value) if isinstance(value, int | float) and ok else None

    return OhaReport(
        ok=ok, errors=errors, latency_p50_s=seconds("p50"), latency_p99_s=seconds("p99")
    )

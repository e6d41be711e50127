"""Reading a run for the report: formatting figures, an entry's status, which entries to
chart, and the one mapping from an entry's kind to the report section it belongs in."""

from __future__ import annotations

import math
from typing import Any

from playground.core.jsonmodel import to_json
from playground.core.notation import EM_DASH, percent
from playground.core.results import Entry, Run

#: kind -> (section title, order). A new kind gets its own section by adding one line here;
#: an unknown kind still renders, in the generic section.
SECTIONS: dict[str, tuple[str, int]] = {
    "calibration": ("Calibration: the harness ceiling", 0),
    "scenario": ("The nine scenarios", 10),
    "variant": ("Variants", 20),
    "contender": ("2026 contenders", 30),
    "demo": ("Demos from other write-ups", 40),
    "probe": ("Scale probe", 50),
}
OTHER_SECTION = ("Other entries", 99)


def section_of(kind: str) -> tuple[str, int]:
    return SECTIONS.get(kind, OTHER_SECTION)


def by_section(entries: list[Entry]) -> list[tuple[str, list[Entry]]]:
    """Entries grouped by their kind's section, sections in their order, entries in run order."""
    groups: dict[tuple[str, int], list[Entry]] = {}
    for entry in entries:
        groups.setdefault(section_of(entry.kind), []).append(entry)
    return [(title, group) for (title, _), group in sorted(groups.items(), key=lambda kv: kv[0][1])]


def fmt(value: float | int | None, *, digits: int = 1) -> str:
    """A number compactly (ints stay ints); unknown values become a dash, never "None"."""
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return EM_DASH
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def fmt_rate(value: float | None) -> str:
    """Requests/s: two decimals below 10 (0.97 and 1.48 must not both read "1"-ish)."""
    return fmt(value, digits=2 if value is not None and abs(value) < 10 else 1)


def fmt_pct(fraction: float | None) -> str:
    """A share as the bench's report shows it: one decimal, an em dash where unknown."""
    return percent(fraction, digits=1, dash=EM_DASH)


def fmt_spread(entry: Entry, key: str) -> str:
    """ "median (min–max)" over repeats when there was more than one, else just the figure."""
    median = fmt_rate(getattr(entry, key))
    low_high = getattr(entry.spread, key, None) if entry.spread else None
    if len(entry.repeats) < 2 or not low_high:
        return median
    return f"{median} ({fmt_rate(low_high[0])}–{fmt_rate(low_high[1])})"


def fmt_threads(entry: Entry) -> str:
    """ "before → peak": the growth is the point of the playground (threads spawned under load)."""
    return f"{fmt(entry.threads_before)} → {fmt(entry.threads_peak)}"


def fmt_delta(a: float | None, b: float | None) -> str:
    if a is None or b is None or a == 0:
        return "n/a"
    return f"{(b - a) / a * 100:+.1f}%"


def efficiency(entry: Entry) -> float | None:
    if entry.efficiency is not None:
        return entry.efficiency
    return (
        entry.steady_rps / entry.ideal_rps
        if entry.steady_rps is not None and entry.ideal_rps
        else None
    )


def status(entry: Entry) -> tuple[str, str]:
    """ok / invalid / error, with the reasons to show next to it."""
    reasons = [r for r in entry.invalid_reasons if r]
    if entry.error:
        return "error", "; ".join(dict.fromkeys([entry.error, *reasons]))
    if not entry.valid or reasons:
        return "invalid", "; ".join(reasons) or "no reason recorded"
    return "ok", ""


def has_finding(entry: Entry, code: str) -> bool:
    return any(f.code == code for f in entry.findings)


#: The findings that withhold a steady figure, and the word the table shows for each.
NO_STEADY_FIGURE = {"no-steady-state": "not steady", "errors-in-steady": "errors"}


def steady_cell(entry: Entry) -> str:
    """The steady figure, or why there is none (never c / mean of a run that did not settle)."""
    if entry.steady_rps is None:
        for code, why in NO_STEADY_FIGURE.items():
            if has_finding(entry, code):
                return f"{EM_DASH} ({why})"
    return fmt_spread(entry, "steady_rps")


def spread_cell(entry: Entry) -> str:
    """The relative spread over repeats, marked noisy where the diagnosis says so."""
    if entry.spread is None or entry.spread.relative is None:
        return EM_DASH
    text = f"{entry.spread.relative:.1%}"
    return f"{text} noisy" if has_finding(entry, "noisy") else text


def is_sweep(run: Run) -> bool:
    if run.settings is not None and run.settings.sweep:
        return True
    seen: dict[str, set[int]] = {}
    for entry in run.scenarios:
        seen.setdefault(entry.name, set()).add(entry.concurrency)
    return any(len(cs) > 1 for cs in seen.values())


def main_entries(run: Run) -> list[Entry]:
    """One entry per name for the per-scenario charts: the run's main concurrency, else the
    highest one measured."""
    main_c = run.settings.concurrency if run.settings is not None else None
    by_name: dict[str, list[Entry]] = {}
    for entry in run.scenarios:
        by_name.setdefault(entry.name, []).append(entry)
    chosen = []
    for entries in by_name.values():
        at_main = [e for e in entries if main_c is not None and e.concurrency == main_c]
        chosen.append(at_main[0] if at_main else max(entries, key=lambda e: e.concurrency))
    return chosen


def ceiling_for(entry: Entry, calibration: Entry | None) -> float | None:
    """The calibration ceiling applies only to entries loaded the same way (same c and delay)."""
    if calibration is None or entry is calibration:
        return None if calibration is None else calibration.steady_rps
    if (entry.concurrency, entry.delay) != (calibration.concurrency, calibration.delay):
        return None
    return calibration.steady_rps


def keys_of(model: object | None) -> dict[str, Any]:
    """A header's typed environment or settings by the keys results.json keeps them under, in
    its order (empty: not recorded), for the tables that show every key."""
    return to_json(model) if model is not None else {}


def flatten(mapping: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested dicts (images, packages) to dotted keys so every key gets its own line."""
    flat: dict[str, str] = {}
    for key, value in mapping.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{dotted}."))
        elif isinstance(value, list):
            flat[dotted] = ", ".join(text(v) for v in value)
        elif isinstance(value, dict):
            flat[dotted] = ""
        else:
            flat[dotted] = text(value)
    return flat


def text(value: Any) -> str:
    """A scalar from the results as one line of text (None -> empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return " ".join(str(value).split())


def title(run: Run) -> str:
    return f"Flask concurrency playground — run {run.run_id or 'unknown run'}"

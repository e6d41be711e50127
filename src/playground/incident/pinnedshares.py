"""How far the model's verdict turns on the busiest worker's share: one prediction per share,
every draw at it (`playground predict ... --busiest-share S`), read from their records."""

from __future__ import annotations

from collections.abc import Sequence

from playground.incident.predictrecord import PredictedTarget, PredictRecord

#: The predictions docs/predict.md reads (run HB), one a share, each with 20 draws of
#: gunicorn-threads, gunicorn-threads+deadline and gunicorn-threads+haproxy.
RUNS = (
    "20261204-220124-predict",
    "20261204-220135-predict",
    "20261204-220146-predict",
    "20261204-220158-predict",
    "20261204-220212-predict",
)
#: The targets, by the names the records keep, and their columns' headings.
COLUMNS = {
    "gunicorn-threads": "the pool as it is",
    "gunicorn-threads+deadline": "`deadline`",
    "gunicorn-threads+haproxy": "`haproxy`",
}


def cell(t: PredictedTarget) -> str:
    """One target's draws at one share: how many held, came back or stayed down, and where
    some came back, the median time back over the draws."""
    parts = [
        f"{word} {n}"
        for word, n in (
            ("held", t.held),
            ("recovered", t.collapsed),
            ("not recovered", t.not_recovered),
        )
        if n
    ]
    came_back = t.collapsed and t.recovery_median_s is not None
    back = f"; median time back {t.recovery_median_s:g} s" if came_back else ""
    return f"{', '.join(parts)} of {t.draws}{back}"


def table(found: Sequence[PredictRecord]) -> list[str]:
    """A row per prediction of :data:`RUNS` in `found`, by its pinned share."""
    by_id = {r.run_id: r for r in found}
    lines = [
        "| busiest share | run | " + " | ".join(COLUMNS.values()) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    rows = sorted(
        (float(r.settings["busiest_share"]), r) for r in (by_id[i] for i in RUNS if i in by_id)
    )
    for share, record in rows:
        named = {t.name: t for t in record.targets}
        cells = [cell(named[n]) if n in named else "-" for n in COLUMNS]
        lines.append(f"| {share:g} | {record.run_id} | " + " | ".join(cells) + " |")
    return lines

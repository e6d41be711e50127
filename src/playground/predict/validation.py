"""docs/predict.md's tables of the model against the rows measured, made from the run records.

Each row of a table is a measurement kept in docs/runs/ (:mod:`playground.incident.runrecords`, its
`model_rows`); the model runs again on that run's settings and the row's target, and the
table is written between the page's marker comments (``<!-- validation:NAME -->`` and
``<!-- /validation:NAME -->``), so a change to the model changes the page by one command::

    .venv/bin/python -m playground.predict.validation           # says which tables are stale
    .venv/bin/python -m playground.predict.validation --write   # writes them
    .venv/bin/python -m playground.predict.validation --scores    # the edge's Brier table

A row agrees by the page's rule: the same verdict (held / collapsed / not recovered within
the run), the visits served during the incident within 10 points, and the time to recover
within 5 s (or both past the run's end). Repeats of one setting share one prediction: the
model gives every repeat the same arrivals.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from playground.core.odds import Frequency
from playground.core.scenarios import resolve_story
from playground.incident import (
    acceptbusy,
    acceptload,
    edge,
    edgescore,
    held,
    heldsplit,
    pinnedshares,
    predictrecord,
    recoveryscore,
    runrecords,
    runspread,
    scoring,
    sharenoise,
    threadturn,
)
from playground.incident.calibration import plot_calibration
from playground.incident.runrecords import ModelRow, RunRecord, TargetRecord
from playground.incident.settings import StorySettings
from playground.predict import measured as fit
from playground.predict import run as model
from playground.predict.system import covers, system_for

PAGE = Path(__file__).resolve().parents[3] / "docs" / "predict.md"
#: The calibration plot the page shows, drawn from the same records as its score table.
CALIBRATION = PAGE.parent / "predict" / "calibration.png"
#: The page's criteria for a row that agrees.
SERVED_POINTS = 10
RECOVERY_S = 5
HEADER = [
    "| row | run | M verdict, served, recovery | P verdict, served, recovery | agrees |",
    "|---|---|---|---|---|",
]
SHORT = {held.NOT_RECOVERED: "not recovered"}

#: One prediction: a target at a run's settings (as JSON, so it can be a key and be pickled).
Key = tuple[str, str]


@dataclass(frozen=True)
class Outcome:
    """A row's verdict and figures as the page writes them (whole percent, whole seconds)."""

    verdict: str
    served: int | None
    recovery_s: int | None

    def cell(self) -> str:
        words = [SHORT.get(self.verdict, self.verdict)]
        if self.served is not None:
            words.append(f"{self.served}%")
            if self.recovery_s is not None:
                words.append(f"{self.recovery_s} s")
        return ", ".join(words)


def _whole(value: float | None) -> int | None:
    return None if value is None else round(value)


def measured(t: TargetRecord) -> Outcome:
    served = None if t.visits_served_during is None else 100 * t.visits_served_during
    return Outcome(t.verdict or "-", _whole(served), _whole(t.recovery_s))


def key(record: RunRecord, target: str) -> Key:
    return target, json.dumps(record.settings, sort_keys=True)


def predict(k: Key) -> Outcome:
    """The model on one target at one run's settings."""
    target, settings = k
    (t,) = resolve_story([target])
    s = StorySettings(**json.loads(settings))
    summary = model.predict_target(t, s).summary
    assert summary is not None
    served = summary.visits_served_during
    return Outcome(
        held.outcome(served, summary.recovery_s),
        _whole(None if served is None else 100 * served),
        _whole(summary.recovery_s),
    )


def agrees(m: Outcome, p: Outcome) -> str:
    """`yes`, or `**no**` with what differs."""
    why = []
    if m.verdict != p.verdict:
        why.append("verdict")
    if m.served is not None and p.served is not None and abs(m.served - p.served) > SERVED_POINTS:
        why.append(f"{abs(m.served - p.served)} points")
    if (
        not why
        and m.recovery_s is not None
        and p.recovery_s is not None
        and abs(m.recovery_s - p.recovery_s) > RECOVERY_S
    ):
        why.append("recovery")
    return "yes" if not why else f"**no** ({', '.join(why)})"


def tables(records: Sequence[RunRecord]) -> dict[str, list[str]]:
    """Every table the records' rows make, by name, the model run once per target and
    settings (over the cores)."""
    rows: dict[str, list[tuple[ModelRow, RunRecord]]] = {}
    for record in records:
        for row in record.model_rows:
            rows.setdefault(row.table, []).append((row, record))
    keys = sorted({key(rec, row.target) for found in rows.values() for row, rec in found})
    predicted = dict(zip(keys, model.each(predict, keys), strict=True))
    out: dict[str, list[str]] = {}
    for name, found in sorted(rows.items()):
        lines = list(HEADER)
        for row, rec in sorted(found, key=lambda f: f[0].position):
            m = measured(rec.target(row.target, row.repeat))
            note = rec.target(row.target, row.repeat).note
            p = predicted[key(rec, row.target)]
            m_cell = m.cell() + (f" ({note})" if note else "")
            lines.append(f"| {row.label} | {rec.run_id} | {m_cell} | {p.cell()} | {agrees(m, p)} |")
        out[name] = lines
    return out


def _marks(name: str) -> tuple[str, str]:
    return f"<!-- validation:{name} -->", f"<!-- /validation:{name} -->"


def written(text: str, made: dict[str, list[str]]) -> str:
    """The page with each table between its markers; a table without markers is refused."""
    for name, lines in made.items():
        start, end = _marks(name)
        pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.DOTALL)
        if not pattern.search(text):
            raise runrecords.RecordError(f"docs/predict.md has no markers for table {name!r}")
        text = pattern.sub(_replacement("\n".join([start, *lines, end])), text)
    return text


def _replacement(block: str) -> Callable[[re.Match[str]], str]:
    """A replacement that takes `block` as it is (no backslash escapes read in it)."""
    return lambda _match: block


def _label(k: Key) -> str:
    """`gunicorn-threads (incident_delay 2.5)`: the target and the settings it differs by."""
    target, settings = k
    words = ", ".join(
        f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}"
        for name, value in sorted(json.loads(settings).items())
    )
    return f"{target} ({words})" if words else target


def settings_of(records: Sequence[RunRecord]) -> dict[Key, scoring.Setting]:
    """Each target the model runs, at each run's settings, with its measured k of n (collapsed of
    measured)."""
    found: dict[Key, list[bool]] = {}
    for record in records:
        for t in record.targets:
            if t.verdict is not None:
                found.setdefault(key(record, t.name), []).append(t.verdict != held.HELD)
    out = {}
    for k, outcomes in sorted(found.items()):
        s = StorySettings(**json.loads(k[1]))
        (resolved,) = resolve_story([k[0]])
        if not covers(resolved):  # a contender the model does not run: nothing to score
            continue
        system = system_for(resolved, s)
        out[k] = scoring.Setting(
            label=_label(k),
            target=k[0],
            rate=s.rate,
            incident_delay=s.incident_delay,
            pool=system.pool if system.model == "threads" else None,
            collapsed=Frequency(sum(outcomes), len(outcomes)),
        )
    return out


#: How the page's first screen names the model drawing its machine's own split.
SPLIT_LEAD = (
    "Drawing the split of the machine it forecasts, from a run measured there before "
    "(`--shares-from`), and scored at"
)


def page_tables(records: Sequence[RunRecord]) -> dict[str, list[str]]:
    """The page's tables made from records alone, without running the model: what decides a
    collapse at each edge setting, and the model's score there."""
    predictions = predictrecord.load_all()
    scores = edgescore.tables(edgescore.SCORED, records, predictions)
    scored = edgescore.points(edgescore.SCORED, records, predictions)
    recovery = recoveryscore.points(edgescore.SCORED, records, predictions)
    split = edgescore.points(edgescore.SPLIT_SCORED, records, predictions)
    return {
        **edge.page_tables(records),
        "edge-scores": scores,
        "edge-summary": [
            *edgescore.summary(scored),
            *recoveryscore.summary(recovery),
            *edgescore.summary(split, lead=SPLIT_LEAD),
        ],
        "edge-recovery": recoveryscore.tables(edgescore.SCORED, records, predictions),
        "edge-split": edgescore.tables(
            edgescore.SPLIT_SCORED,
            records,
            predictions,
            rival=("the model drawing the fit run's split", edgescore.SPLIT_RIVAL),
        ),
        "edge-split-recovery": recoveryscore.tables(edgescore.SPLIT_SCORED, records, predictions),
        "edge-earlier": edgescore.rows(edgescore.points(edgescore.EARLIER, records, predictions)),
        "run-spread": runspread.table(records),
        "share-noise": [*sharenoise.table(records), "", *_drawn_shares(records)],
        "accept-load": acceptload.table(_record(records, acceptload.MEASURED_RUN)),
        "steal-split": sharenoise.steal_table(records),
        "pinned-shares": pinnedshares.table(predictions),
        "accept-busy": acceptbusy.table(
            [_record(records, r) for r in fit.BUSY_FIT_RUNS], rate=fit.fit_rate()
        ),
        "held-split": heldsplit.table(
            [
                (_record(records, fit.FIT_RUNS["gunicorn-threads"]), "gunicorn-threads"),
                *((_record(records, r), "gunicorn-threads+haproxy") for r in fit.FREE_THREAD_RUNS),
            ]
        ),
        "thread-turn": threadturn.table(
            [_record(records, r) for runs in fit.TURN_FIT_RUNS.values() for r in runs],
            cpu_ms={
                "uwsgi-threads": 1000 * fit.cpu_per_request_s("uWSGI", "threads"),
                "gunicorn-threads+haproxy": 1000 * fit.cpu_per_request_s("Gunicorn", "threads"),
            },
        ),
    }


def _record(records: Sequence[RunRecord], run_id: str) -> RunRecord:
    found = [r for r in records if r.run_id == run_id]
    if not found:
        raise runrecords.RecordError(f"no record of run {run_id} in docs/runs/")
    return found[0]


def _drawn_shares(records: Sequence[RunRecord]) -> list[str]:
    """The model's draws of the busiest share, spread as a repeat's count would show them."""
    found = edge.EDGE_SETTINGS[0].repeats(records)
    counted = sharenoise.spread(found, records).counted
    values = fit.shares()
    return [
        f"The model's shares, each counted over {counted} connections as a repeat's is, would "
        f"spread by {fit.drawn_spread(counted):.3f}: the fit run's {len(values)} shares' "
        f"{statistics.stdev(values):.3f}, the kernel density's {fit.bandwidth(values):.3f} "
        "and the model's own choice per connection, added in squares."
    ]


def calibration_png(records: Sequence[RunRecord], path: Path) -> None:
    """The calibration plot from the same points as the page's score table."""
    predictions = predictrecord.load_all()
    scored = edgescore.points(edgescore.SCORED, records, predictions)
    plot_calibration(scored, path)


def _stale_png(records: Sequence[RunRecord]) -> bool:
    with tempfile.TemporaryDirectory() as scratch:
        drawn = Path(scratch) / CALIBRATION.name
        calibration_png(records, drawn)
        return not CALIBRATION.exists() or drawn.read_bytes() != CALIBRATION.read_bytes()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m playground.predict.validation")
    parser.add_argument("--write", action="store_true", help="write the tables into the page")
    parser.add_argument(
        "--scores", action="store_true", help="print the page's Brier table where pools tip"
    )
    args = parser.parse_args(argv)
    records = runrecords.load_all()
    if args.scores:
        print("\n".join(page_tables(records)["edge-scores"]))
        return 0
    text = PAGE.read_text()
    new = written(text, {**tables(records), **page_tables(records)})
    if args.write:
        PAGE.write_text(new)
        calibration_png(records, CALIBRATION)
        return 0
    if new != text or _stale_png(records):
        print(
            "docs/predict.md's tables or its calibration plot are stale: run with --write",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

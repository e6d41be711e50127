"""docs/story.md's odds, counted again: each "k of n (a-b %)" of its odds table re-derived from
the per-repeat verdicts of the records (docs/runs/) that the row's "runs" column names.

A row can be counted again when every record it names was written from a run's results
(`"source": "recorded"`). A record transcribed from the page proves nothing about the page, so
a row that rests on one fails the test: it is measured again or it goes.

No Docker: the page and the records are read as files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from playground.core.odds import Frequency
from playground.incident import held, runrecords
from playground.incident.runrecords import RunRecord, TargetRecord
from tests.unit.test_docs import RUN_ID, is_table_start, runs_table, table_rows

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "docs" / "story.md"
ODDS_COLUMNS = ("row", "third party", "held", "recovered", "runs")
#: A repeat that came back within the run: it held, or collapsed and recovered.
RECOVERED = {held.HELD, held.COLLAPSED}


@dataclass(frozen=True)
class OddsRow:
    """One row of the odds table, read: the targets it counts, and whether each on its own."""

    key: tuple[str, str]
    delay_s: float
    targets: tuple[str, ...]
    each: bool
    cells: dict[str, str]
    labels: tuple[str, ...]


def odds_rows(text: str, columns: tuple[str, ...] = ODDS_COLUMNS) -> list[OddsRow]:
    """The odds table of a page (the one whose header is `columns`): each row with its
    targets. A row that starts with "+" layers its remedies (`+ \\`x\\``) on the last row that
    did not; "each" counts them one by one."""
    lines = text.splitlines()
    for i in range(len(lines)):
        if is_table_start(lines, i) and tuple(h.lower() for h in table_rows(lines, i)[0]) == (
            columns
        ):
            break
    else:
        return []
    rows, base = [], ""
    for cells in table_rows(lines, i)[1]:
        row = dict(zip(ODDS_COLUMNS, cells, strict=True))
        label = row["row"]
        if label.startswith("+"):
            targets = tuple(f"{base}+{name}" for name in re.findall(r"\+ `([\w.-]+)`", label))
        else:
            base = label.split()[0]
            targets = (base,)
        rows.append(
            OddsRow(
                key=(label, row["third party"]),
                delay_s=float(row["third party"].removesuffix(" s")),
                targets=targets,
                each=label.endswith(", each"),
                cells=row,
                labels=tuple(re.split(r",\s*", row["runs"])),
            )
        )
    return rows


def repeats(row: OddsRow, target: str, records: list[RunRecord]) -> list[TargetRecord]:
    """The trusted repeats of `target` in `records` at the row's third party and the story's
    other defaults: the generator kept its schedule."""
    return [
        t
        for r in records
        if set(r.settings) <= {"incident_delay"}
        and r.story_settings().incident_delay == row.delay_s
        for t in r.targets
        if t.name == target and t.valid is True
    ]


def counted(found: list[TargetRecord]) -> dict[str, str]:
    """Held and recovered over some repeats, as the page writes them."""
    if not found:
        return {"held": "no repeat", "recovered": "no repeat"}
    n = len(found)
    return {
        "held": Frequency(sum(t.verdict == held.HELD for t in found), n).text(),
        "recovered": Frequency(sum(t.verdict in RECOVERED for t in found), n).text(),
    }


def check(text: str, records: dict[str, RunRecord]) -> tuple[list[str], list[tuple[str, str]]]:
    """The page's odds that its records do not give (each with what they give), and the rows
    that rest on a transcribed record or name no target, which the test cannot count."""
    ids = {label: RUN_ID.findall(row["run id"]) for label, row in runs_table(text).items()}
    wrong, uncounted = [], []
    for row in odds_rows(text):
        named = [records.get(i) for label in row.labels for i in ids.get(label, [""])]
        kept = [r for r in named if r is not None]
        if (
            not row.targets
            or len(kept) < len(named)
            or any(r.source != runrecords.RECORDED for r in kept)
        ):
            uncounted.append(row.key)
            continue
        groups = [[t] for t in row.targets] if row.each else [list(row.targets)]
        for group in groups:
            found = [t for target in group for t in repeats(row, target, kept)]
            for column, text_ in counted(found).items():
                if row.cells[column] != text_:
                    wrong.append(
                        f"{row.key} {', '.join(group)} {column}: {row.cells[column]}, records {text_}"
                    )
    return wrong, uncounted


def stored_records() -> dict[str, RunRecord]:
    """Every story record, by its run id's timestamp (as the pages' RUN_ID finds it)."""
    return {RUN_ID.findall(r.run_id)[0]: r for r in runrecords.load_all()}


def test_the_recount_finds_a_wrong_count_and_leaves_transcribed_rows_aside() -> None:
    def record(run_id: str, source: str, *verdicts: tuple[str, str, bool]) -> RunRecord:
        targets = [
            TargetRecord(name=name, repeat=i + 1, verdict=verdict, valid=valid)
            for i, (name, verdict, valid) in enumerate(verdicts)
        ]
        return RunRecord(run_id=run_id, kind="story", source=source, targets=targets)

    records = {
        "20261126-000001": record(
            "20261126-000001-story",
            runrecords.RECORDED,
            ("gunicorn-threads", held.HELD, True),
            ("gunicorn-threads", held.NOT_RECOVERED, True),
            ("gunicorn-threads", held.HELD, False),  # not trusted: not counted
            ("gunicorn-threads+haproxy", held.COLLAPSED, True),
        ),
        "20261126-000002": record("20261126-000002-story", runrecords.TRANSCRIBED),
    }
    page = (
        "| row | third party | held | recovered | runs |\n|---|---|---|---|---|\n"
        "| gunicorn-threads 2 x 64 | 2 s | 1 of 2 (9-91 %) | 1 of 2 (9-91 %) | A |\n"
        "| + `haproxy` | 2 s | 1 of 1 (21-100 %) | 1 of 1 (21-100 %) | A |\n"
        "| + `deadline` | 2 s | 0 of 1 (0-79 %) | 1 of 1 (21-100 %) | A, B |\n\n"
        "| run | run id | what | command | date (UTC) | machine | generator check |\n"
        "|---|---|---|---|---|---|---|\n"
        "| A | 20261126-000001-story | x | `make story` | 2026-11-26 | 2 cores | valid |\n"
        "| B | 20261126-000002-story | x | `make story` | 2026-11-26 | 2 cores | valid |\n"
    )
    wrong, uncounted = check(page, records)
    assert wrong == [
        "('+ `haproxy`', '2 s') gunicorn-threads+haproxy held: 1 of 1 (21-100 %), "
        "records 0 of 1 (0-79 %)"
    ]
    assert uncounted == [("+ `deadline`", "2 s")]


def test_every_count_the_records_can_give_is_theirs() -> None:
    wrong, _ = check(STORY.read_text(encoding="utf-8"), stored_records())
    assert wrong == []


def test_every_row_of_the_odds_table_is_counted_again() -> None:
    """The odds table holds only rows whose runs kept every repeat: none is left uncounted."""
    _, uncounted = check(STORY.read_text(encoding="utf-8"), stored_records())
    assert uncounted == []

"""README's answer, counted again: every "k of n (a-b %)" on its first screen is named below
with the rows of docs/story.md's odds table it adds up, and those rows' repeats are counted
again from the records their runs name (test_story_odds reads the table and the records).

A claim whose rows rest on a transcribed record cannot be counted, so it fails: the README's
answer rests on kept repeats only. A count on the first screen that no claim names fails too,
as does a word that overstates a count ("every", "always", "never").

No Docker: the pages and the records are read as files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from playground.core.odds import Frequency
from playground.incident import runrecords
from tests.unit.test_docs import RUN_ID, runs_table
from tests.unit.test_story_odds import (
    RECOVERED,
    STORY,
    OddsRow,
    odds_rows,
    repeats,
    stored_records,
)

README = Path(__file__).resolve().parents[2] / "README.md"
COUNT = re.compile(r"(\d+) of (\d+) \((\d+)-(\d+) %\)")
OVERSTATING = re.compile(r"\b(every time|always|never)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """A count of the README's answer: the words before it, the odds rows it adds up (row,
    third party) and the column it counts (held or recovered)."""

    words: str
    rows: tuple[tuple[str, str], ...]
    column: str


GEVENT = (("uwsgi-gevent 2 x 1000", "2 s"), ("gunicorn-gevent 2 x 1000", "2 s"))
GTHREAD = (("gunicorn-threads 2 x 64", "2 s"),)
UWSGI = (("uwsgi-threads 2 x 64", "2 s"),)
DEADLINE = (("+ `deadline`", "2 s"),)
BOUNDED = (("+ `gunicorn-bounded-queue`", "2 s"),)
HAPROXY = (("+ `haproxy`", "2 s"),)

CLAIMS = (
    Claim("gevent, on Gunicorn or uWSGI, held in", GEVENT, "held"),
    Claim("uWSGI's threads held in", UWSGI, "held"),
    Claim("Gunicorn's threads held in", GTHREAD, "held"),
    Claim("and recovered in", GTHREAD, "recovered"),
    Claim("waited over 4 s) held in", DEADLINE, "held"),
    Claim("and came back within the 40 s after it in", DEADLINE, "recovered"),
    Claim("a bounded queue held in", BOUNDED, "held"),
    Claim("HAProxy in front in", HAPROXY, "held"),
)


def answer(text: str) -> str:
    """The first screen's answer: from "The answer" to the paragraph after its list."""
    start = text.index("The answer")
    end = text.index("\n\n", text.index("\n- ", start))
    return text[start:end]


def recount(rows: list[OddsRow], column: str, page: str) -> Frequency:
    """The rows' repeats counted again from their records: held, or came back (held or
    collapsed), of the trusted repeats."""
    records = stored_records()
    ids = {label: RUN_ID.findall(row["run id"]) for label, row in runs_table(page).items()}
    found = []
    for row in rows:
        named = [records.get(i) for label in row.labels for i in ids.get(label, [""])]
        assert all(r is not None and r.source == runrecords.RECORDED for r in named), (
            f"{row.key} rests on a run with no kept repeats: measure it again"
        )
        kept = [r for r in named if r is not None]
        found += [t for target in row.targets for t in repeats(row, target, kept)]
    if column == "held":
        return Frequency(sum(t.verdict == "held" for t in found), len(found))
    return Frequency(sum(t.verdict in RECOVERED for t in found), len(found))


def test_each_count_of_the_answer_is_its_rows_counted_again() -> None:
    page = STORY.read_text(encoding="utf-8")
    by_key = {row.key: row for row in odds_rows(page)}
    text = answer(README.read_text(encoding="utf-8"))
    for claim in CLAIMS:
        found = re.search(re.escape(claim.words) + r" " + COUNT.pattern, text)
        assert found, f"README's answer has no count after {claim.words!r}"
        expected = recount([by_key[k] for k in claim.rows], claim.column, page)
        assert found.group(0).removeprefix(claim.words + " ") == expected.text(), claim.words


def test_the_answer_has_no_count_that_no_claim_names() -> None:
    text = answer(README.read_text(encoding="utf-8"))
    assert len(COUNT.findall(text)) == len(CLAIMS)


def test_the_answer_overstates_no_count() -> None:
    assert OVERSTATING.findall(answer(README.read_text(encoding="utf-8"))) == []


def test_a_count_that_disagrees_with_its_rows_is_found() -> None:
    """The recount can fail: a claim over the gevent rows does not read as the gthread row."""
    page = STORY.read_text(encoding="utf-8")
    by_key = {row.key: row for row in odds_rows(page)}
    gevent = recount([by_key[k] for k in GEVENT], "held", page)
    gthread = recount([by_key[k] for k in GTHREAD], "held", page)
    assert gevent.text() != gthread.text()

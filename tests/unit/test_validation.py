"""docs/predict.md's generated tables: a row's cells and its agreement by the page's rule, the
page's markers, and the records' rows (the model itself runs in
tests/integration/test_predict_page.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from playground.incident import runrecords
from playground.predict import validation
from playground.predict.validation import Outcome, agrees


def test_a_rows_cells_and_its_agreement() -> None:
    assert Outcome("collapsed and did not recover", 72, None).cell() == "not recovered, 72%"
    assert Outcome("collapsed", 76, 33).cell() == "collapsed, 76%, 33 s"
    assert Outcome("held", None, None).cell() == "held"
    assert agrees(Outcome("held", 100, 1), Outcome("held", 100, 0)) == "yes"
    m = Outcome("collapsed", 76, 33)
    assert agrees(m, Outcome("collapsed and did not recover", 72, None)) == "**no** (verdict)"
    assert agrees(m, Outcome("collapsed", 66, 33)) == "yes"  # 10 points: within
    assert agrees(m, Outcome("collapsed", 65, 33)) == "**no** (11 points)"
    assert agrees(m, Outcome("collapsed", 76, 39)) == "**no** (recovery)"
    assert agrees(m, Outcome("collapsed", 76, 38)) == "yes"
    assert agrees(Outcome("held", 100, 1), Outcome("collapsed", 61, 5)) == (
        "**no** (verdict, 39 points)"
    )


def test_the_tables_go_between_their_markers_and_only_there() -> None:
    text = "a\n<!-- validation:x -->\n| old |\n<!-- /validation:x -->\nb\n"
    got = validation.written(text, {"x": ["| new |"]})
    assert got == "a\n<!-- validation:x -->\n| new |\n<!-- /validation:x -->\nb\n"
    with pytest.raises(runrecords.RecordError, match="no markers"):
        validation.written(text, {"y": ["| new |"]})


def test_every_model_row_names_a_measurement_its_record_keeps() -> None:
    """Each row of the page's tables resolves to a target and repeat of its run, and every
    table the records fill has its markers on the page."""
    page = validation.PAGE.read_text()
    rows: Counter[str] = Counter()
    for record in runrecords.load_all():
        record.story_settings()  # the settings are ones the story takes
        for row in record.model_rows:
            assert record.target(row.target, row.repeat).verdict is not None
            assert f"<!-- validation:{row.table} -->" in page
            rows[row.table] += 1
    assert rows, "no record names a row of the page"
    for table, count in rows.items():
        block = page.split(f"<!-- validation:{table} -->")[1].split(
            f"<!-- /validation:{table} -->"
        )[0]
        body = [line for line in block.splitlines() if line.startswith("|")][2:]  # less the head
        assert len(body) == count, f"{table}: {len(body)} rows on the page, {count} in records"


def test_the_repeats_of_a_setting_are_counted_together_and_apart_from_other_settings() -> None:
    """`haproxy` held in all 28 measurements at 2 s (three, ten kept in run EY, fifteen in FH) and
    collapsed in all three at 2.5 s: one setting each, whichever run measured it; Little's law
    reads each one's own pool."""
    found = {s.label: s for s in validation.settings_of(runrecords.load_all()).values()}
    at_two = found["gunicorn-threads+haproxy"]
    past = found["gunicorn-threads+haproxy (incident_delay 2.5)"]
    assert (at_two.collapsed.k, at_two.collapsed.n) == (0, 3 + 10 + 15)
    assert (past.collapsed.k, past.collapsed.n) == (3, 3)
    assert (at_two.incident_delay, past.incident_delay) == (2.0, 2.5)
    assert found["gunicorn-threads+threads-4x"].pool == 512
    assert found["gunicorn-gevent"].pool is None

"""docs/predict.md's generated tables: a row's cells and its agreement by the page's rule, the
page's markers, and the records' rows (the model itself runs in
tests/integration/test_predict_page.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from playground.incident import held, runrecords
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
    """`haproxy`'s repeats at 2 s and at 2.5 s: one setting each, whichever run measured it,
    each counted over every run that measured it (counted again here by hand from the
    records); Little's law reads each one's own pool."""
    records = runrecords.load_all()
    found = {s.label: s for s in validation.settings_of(records).values()}

    def by_hand(delay: float) -> tuple[int, int, int]:
        """Collapsed, measured, and the runs they came from."""
        verdicts = [
            (r.run_id, t.verdict)
            for r in records
            if r.story_settings().incident_delay == delay
            for t in r.targets
            if t.name == "gunicorn-threads+haproxy" and t.verdict is not None
        ]
        collapsed = sum(v != held.HELD for _, v in verdicts)
        return collapsed, len(verdicts), len({run for run, _ in verdicts})

    at_two = found["gunicorn-threads+haproxy"]
    past = found["gunicorn-threads+haproxy (incident_delay 2.5)"]
    assert by_hand(2.0)[2] >= 2, "one run alone cannot show repeats counted together"
    for setting, delay in ((at_two, 2.0), (past, 2.5)):
        collapsed, n, _ = by_hand(delay)
        assert (setting.collapsed.k, setting.collapsed.n) == (collapsed, n)
    # Held in every repeat at 2 s, collapsed in every one at 2.5 s.
    assert at_two.collapsed.k == 0 and past.collapsed.k == past.collapsed.n
    assert (at_two.incident_delay, past.incident_delay) == (2.0, 2.5)
    assert found["gunicorn-threads+threads-4x"].pool == 512
    assert found["gunicorn-gevent"].pool is None

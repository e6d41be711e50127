"""docs/predict.md's tables of the model against the rows measured, run again: the model on
every row's settings and target from the run records (docs/runs/), and the page's tables
must be what it gives. No Docker, but about two minutes on 2 cores, too long for the unit
suite. After a change to the model: `.venv/bin/python -m playground.predict.validation
--write`."""

from __future__ import annotations

import re

from playground.incident import runrecords
from playground.predict import validation


def test_the_pages_predicted_figures_are_the_models() -> None:
    text = validation.PAGE.read_text()
    records = runrecords.load_all()
    made = validation.tables(records)
    # Every block of the page that is not made from records alone is one of the model's.
    marked = set(re.findall(r"<!-- validation:([\w.-]+) -->", text))
    assert made and set(made) == marked - set(validation.page_tables(records))
    assert validation.written(text, made) == text, (
        "docs/predict.md's tables differ from the model: "
        "python -m playground.predict.validation --write"
    )

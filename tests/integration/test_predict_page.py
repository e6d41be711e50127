"""docs/predict.md's tables of the model against the rows measured, run again: the model on
every row's settings and target from the run records (docs/runs/), and the page's tables
must be what it gives. No Docker, but about two minutes on 2 cores, too long for the unit
suite. After a change to the model: `.venv/bin/python -m playground.predict.validation
--write`."""

from __future__ import annotations

from playground.incident import runrecords
from playground.predict import validation


def test_the_pages_predicted_figures_are_the_models() -> None:
    text = validation.PAGE.read_text()
    made = validation.tables(runrecords.load_all())
    assert len(made) == 10
    assert validation.written(text, made) == text, (
        "docs/predict.md's tables differ from the model: "
        "python -m playground.predict.validation --write"
    )

"""A fault plugs in as one registration (faults/registry.py): a toy fault defined here alone,
with its own verdict, table and figures, is a choice of `playground faults --fault`, is read
back from faults.json as its own verdict, is drawn by the faults report with its own table and
is kept by its record with its own figures, without editing any other module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from playground import cli
from playground.core.jsonmodel import doc, to_json
from playground.core.scenarios import REGISTRY
from playground.faults import registry, render, runrecord
from playground.faults.fault import Fault
from playground.faults.registry import FaultType
from playground.faults.results import (
    Aftermath,
    FaultFindings,
    FaultRan,
    FaultsRun,
    Probed,
)
from playground.report.document import Table

TOY = "toy-wobble"
TARGET = REGISTRY["gunicorn-threads"]


@dataclass(frozen=True)
class WobbleVerdict:
    """The toy fault's verdict: how many times the target wobbled."""

    probed: Probed = doc("the target as probed", factory=Probed, inline=True)
    wobbles: int = doc("times it wobbled", 0)
    aftermath: Aftermath = doc("the checks after the fault", factory=Aftermath, inline=True)

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and "wobbles" in data


def wobble_table(record: FaultRan) -> Table:
    rows = [[t.probed.name, f"{t.wobbles} wobbles"] for t in record.run.targets]
    return Table(headers=("scenario", "wobbled"), rows=rows)


class Wobble(Fault):
    name = TOY


RUNNERS: tuple[Fault, ...] = (Wobble(),)


@pytest.fixture
def toy() -> Iterator[FaultType]:
    """The toy fault registered for one test, and gone after it."""
    registered = registry.register(
        FaultType(
            name=TOY,
            verdict=WobbleVerdict,
            table=wobble_table,
            figures=lambda t: {"wobbles": float(t.wobbles)},
            counts=lambda t: (t.wobbles, {"200": t.wobbles}),
            runs=__name__,
            timeline=False,
        )
    )
    try:
        yield registered
    finally:
        registry.FAULTS.pop(TOY)
    assert TOY not in registry.names()


def _stored_run() -> FaultsRun:
    verdict = WobbleVerdict(probed=Probed.of(TARGET, clients=3, delay=1.0), wobbles=7)
    record = FaultRan.of(
        FaultFindings(fault=TOY, targets=[verdict]),
        compose_file=("sync-gunicorn.yml",),
        started_at="t",
        marks=[],
        commands=["docker compose wobble"],
    )
    return FaultsRun(run_id="r-faults", runs=[record])


def test_the_toy_fault_is_a_choice_of_the_command(toy: FaultType) -> None:
    args = cli.build_parser().parse_args(["faults", "--fault", TOY])
    assert args.faults == [TOY]


def test_the_toy_fault_is_no_choice_once_it_is_gone(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["faults", "--fault", TOY])
    assert "invalid choice" in capsys.readouterr().err


def test_the_toy_faults_verdict_is_read_back_as_its_own(toy: FaultType) -> None:
    run = _stored_run()
    back = FaultsRun.from_json(json.loads(json.dumps(to_json(run))))
    (target,) = back.runs[0].run.targets  # type: ignore[union-attr]
    assert type(target) is WobbleVerdict and target.wobbles == 7
    assert back == run


def test_the_toy_fault_is_drawn_with_its_own_table(toy: FaultType) -> None:
    report = render.render_markdown(_stored_run())
    assert "| gunicorn-threads | 7 wobbles |" in report
    assert "Answers per second" not in report  # its timeline=False


def test_the_toy_faults_record_keeps_its_figures(toy: FaultType) -> None:
    (row,) = runrecord.from_run(_stored_run(), machine="m").targets
    assert (row.fault, row.name, row.verdict) == (TOY, "gunicorn-threads", "ok")
    assert row.figures == {"wobbles": 7.0} and row.requests == 7 and row.kinds == {"200": 7}


def test_the_toy_fault_is_run_by_its_own_class(toy: FaultType) -> None:
    made = registry.runner(TOY)
    assert made.name == TOY and type(made).__name__ == "Wobble"


def test_the_runners_own_faults_each_run_by_the_class_of_their_word() -> None:
    assert registry.names() == ("upstream-slowdown", "upstream-outage", "db-outage", "overload")
    for name in registry.names():
        assert registry.runner(name).name == name


def test_a_word_is_registered_once(toy: FaultType) -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register(toy)

"""A bench entry's validity (playground.bench.entry.measured_figures): figures are valid only
without failed or non-2xx answers, a saturated load generator, a repeat that gave no report,
or a restarted container; each reason is said."""

from __future__ import annotations

import dataclasses

import pytest

from playground.bench.diagnosis import SATURATED_CPU_PCT
from playground.bench.entry import Measured, measured_figures
from playground.bench.steady import parse_timeline
from playground.core.scenarios import REGISTRY
from tests.unit.test_load import parse_ab, read

TARGET = REGISTRY["gunicorn-threads"]


def clean(*, loadgen_cpu: float | None = 40.0, **changes: int) -> Measured:
    """A clean ab run (41 requests at c=10, every answer 200), with the changes given."""
    r = parse_ab("ab_clean_n41_c10_200ms.txt", tsv="ab_clean_n41_c10_200ms.tsv")
    return Measured(
        result=dataclasses.replace(r, **changes),
        timeline=parse_timeline(read("ab_clean_n41_c10_200ms.tsv")),
        series={},
        before={},
        loadgen_cpu=loadgen_cpu,
    )


def figures(
    measured: list[Measured], *, errors: list[str] | None = None, restarts: dict | None = None
) -> dict:
    return measured_figures(
        TARGET, measured, errors=errors or [], restarts=restarts or {}, fd_limits={}
    )


def test_a_clean_run_is_valid():
    f = figures([clean()])
    assert (f["valid"], f["invalid_reasons"], f["loadgen_saturated"]) == (True, [], False)


@pytest.mark.parametrize(
    ("cpu", "saturated"),
    [(SATURATED_CPU_PCT, True), (SATURATED_CPU_PCT - 0.1, False), (None, False)],
)
def test_a_load_generator_at_the_saturation_threshold_makes_the_entry_invalid(cpu, saturated):
    f = figures([clean(loadgen_cpu=cpu)])
    assert f["loadgen_saturated"] is saturated
    assert f["valid"] is not saturated
    reasons = [f"load generator saturated (CPU {SATURATED_CPU_PCT:.0f}% of a core)"]
    assert f["invalid_reasons"] == (reasons if saturated else [])


def test_the_busiest_repeats_load_generator_counts():
    f = figures([clean(loadgen_cpu=10.0), clean(loadgen_cpu=99.0), clean(loadgen_cpu=10.0)])
    assert f["loadgen_cpu_peak_pct"] == 99.0 and f["loadgen_saturated"] and not f["valid"]


def test_failed_and_non_2xx_answers_of_any_repeat_make_the_entry_invalid():
    f = figures([clean(), clean(failed=1), clean(non_2xx=3)])
    assert not f["valid"]
    assert f["invalid_reasons"] == ["1 failed requests", "3 non-2xx responses"]


def test_a_repeat_without_a_report_and_a_restart_make_the_entry_invalid():
    f = figures([clean()], errors=["ab exited 1: no report"], restarts={"app": 1, "nginx": 0})
    assert not f["valid"]
    assert f["invalid_reasons"] == [
        "ab exited 1: no report",
        "container restarted during the run: {'app': 1}",
    ]

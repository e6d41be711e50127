"""The model's verdicts with the busiest share pinned, as docs/predict.md tables them."""

from __future__ import annotations

from playground.incident import pinnedshares
from playground.incident.predictrecord import PredictedTarget, PredictRecord


def _record(run_id: str, share: float, held: int, back: int, down: int) -> PredictRecord:
    target = PredictedTarget(
        name="gunicorn-threads",
        draws=held + back + down,
        held=held,
        collapsed=back,
        not_recovered=down,
        recovery_median_s=12.0 if back > down else None,
    )
    return PredictRecord(
        run_id=run_id, kind="predict", settings={"busiest_share": share}, targets=[target]
    )


def test_a_row_per_pinned_share_in_order_with_what_the_draws_did():
    first, second = pinnedshares.RUNS[:2]
    lines = pinnedshares.table([_record(first, 0.65, 0, 5, 15), _record(second, 0.5, 18, 2, 0)])
    assert (
        lines[2]
        == f"| 0.5 | {second} | held 18, recovered 2 of 20; median time back 12 s | - | - |"
    )
    assert lines[3] == f"| 0.65 | {first} | recovered 5, not recovered 15 of 20 | - | - |"
    assert len(lines) == 4


def test_records_of_other_runs_are_not_tabled():
    assert pinnedshares.table([_record("20990101-000000-predict", 0.5, 20, 0, 0)])[2:] == []

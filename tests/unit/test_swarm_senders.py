"""K senders' raw records merged into one run: a recorded file cut in two halves the way two
senders would have sent it (each numbering its visits from 0) merges back to the whole."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from playground.incident.analysis import generator_output
from playground.swarm.senders import merge_senders

DATA = Path(__file__).parents[1] / "data"
VALID = {
    "valid": True,
    "reasons": [],
    "send_lag_p50_s": 0.001,
    "send_lag_p99_s": 0.002,
    "send_lag_max_s": 0.003,
}


def recorded(name: str = "openloop_sweep_step_pool8_16rps.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def halves(whole: dict[str, Any], *, k: int = 2) -> list[dict[str, Any]]:
    """What k senders would have written for the same schedule: sender i the visits v with
    v mod k == i, numbered v // k, each with its own (valid) check."""
    col = whole["columns"].index("visit")
    parts = []
    for i in range(k):
        part = copy.deepcopy(whole)
        rows = [r for r in part["attempts"] if r[col] % k == i]
        for r in rows:
            r[col] //= k
        part.update(attempts=rows, visits=len({r[col] for r in rows}), check=dict(VALID))
        for phase in part["settings"]["phases"]:
            phase["rate"] /= k
        parts.append(part)
    return parts


@pytest.mark.parametrize("k", [2, 3])
def test_the_parts_merge_back_to_the_whole(k: int) -> None:
    whole = recorded()
    merged = merge_senders(parts=halves(whole, k=k))
    assert merged.result["attempts"] == whole["attempts"]
    assert merged.result["visits"] == len({r[0] for r in whole["attempts"]})
    assert merged.result["settings"]["phases"] == whole["settings"]["phases"]
    assert [s.sender for s in merged.senders] == list(range(k))
    assert sum(s.attempts for s in merged.senders) == len(whole["attempts"])
    # The usual analysis reads it as it reads one generator's file.
    assert len(generator_output(merged.result).attempts) == len(whole["attempts"])


def test_a_later_sender_is_moved_onto_the_earliest_clock_and_ordered_by_schedule() -> None:
    whole = recorded()
    parts = halves(whole)
    parts[1]["t0_wall"] += 0.5
    parts[1]["events"] = [{"at": 1.0, "sent": 1.001, "end": 1.2, "status": 200}]
    merged = merge_senders(parts=parts)
    assert [s.start_s for s in merged.senders] == [0.0, 0.5]
    assert merged.result["t0_wall"] == whole["t0_wall"]
    intended = [r[2] for r in merged.result["attempts"]]
    assert intended == sorted(intended)
    second = [r for r in merged.result["attempts"] if r[0] % 2 == 1]
    assert second[0][2] == pytest.approx(
        next(r[2] for r in whole["attempts"] if r[0] % 2 == 1) + 0.5
    )
    assert merged.result["events"] == [
        {"at": 1.5, "sent": pytest.approx(1.501), "end": 1.7, "status": 200}
    ]


def test_a_failing_senders_check_makes_the_run_untrusted() -> None:
    parts = halves(recorded())
    assert merge_senders(parts=parts).trusted
    assert merge_senders(parts=parts).result["check"]["valid"] is True
    parts[1]["check"] = {**VALID, "valid": False, "reasons": ["send lag p99 12.0 ms > 10 ms"]}
    merged = merge_senders(parts=parts)
    assert not merged.trusted
    assert [s.check.valid for s in merged.senders] == [True, False]
    assert merged.result["check"]["valid"] is False
    assert merged.result["check"]["reasons"] == ["sender 1: send lag p99 12.0 ms > 10 ms"]
    assert generator_output(merged.result).check.valid is False


def test_the_merged_lags_are_over_every_attempt() -> None:
    whole = recorded()
    merged = merge_senders(parts=halves(whole))
    lags = sorted(r[3] - r[2] for r in whole["attempts"])
    assert merged.result["check"]["send_lag_max_s"] == lags[-1]
    assert merged.result["check"]["send_lag_p50_s"] == lags[(len(lags) + 1) // 2 - 1]

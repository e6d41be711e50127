"""K senders at rate/K each, merged into one run's records.

Each sender is the open-loop generator (loadgen/openloop.py, or its compiled sender) on some
node, writing one JSON file with every attempt's scheduled time. The merge keeps what makes
an open loop trustworthy: every attempt is placed by its *scheduled* time, so a sender that
fell behind shows as lag rather than as load that was never offered (no coordinated
omission). Each sender numbers its visits from 0; in the merged run sender i's visit v is
visit v x K + i. Their clocks are lined up by each one's second 0 on the wall clock (on one
node that is one clock; across nodes it is as good as their time synchronisation).

Each sender's self-check stays its own: the merged run is trusted only when every sender
kept its schedule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from playground.incident.analysis import generator_output, percentile
from playground.incident.swarmresults import SenderRecord

#: The columns that hold a time on the sender's clock (second 0 its start).
TIMES = ("intended", "sent", "end")
#: The same in the records of the control requests (events) and the watches.
EVENT_TIMES = ("at", "sent", "end", "t")


@dataclass(frozen=True)
class MergedLoad:
    """The senders' records as one run: `result` in the generator's own format (what
    `incident.analysis.generator_output` reads), and each sender's record."""

    result: dict[str, Any]
    senders: list[SenderRecord]

    @property
    def trusted(self) -> bool:
        """Every sender kept its schedule."""
        return all(s.check.valid for s in self.senders)


def _rows(
    part: Mapping[str, Any], *, columns: list[str], index: int, k: int, shift: float
) -> list[list[Any]]:
    """One sender's attempts in the merged run's columns, numbered and timed in it."""
    idx = {c: i for i, c in enumerate(part["columns"])}
    rows = []
    for raw in part["attempts"]:
        row = {c: raw[idx[c]] for c in columns}
        row["visit"] = row["visit"] * k + index
        row.update({c: row[c] + shift for c in TIMES})
        rows.append([row[c] for c in columns])
    return rows


def _shifted(records: Sequence[Mapping[str, Any]], shift: float) -> list[dict[str, Any]]:
    return [{k: v + shift if k in EVENT_TIMES else v for k, v in r.items()} for r in records]


def _peak_in_flight(rows: list[list[Any]], *, sent: int, end: int) -> int:
    edges = sorted([(r[sent], 1) for r in rows] + [(r[end], -1) for r in rows])
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def _settings(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The first sender's settings with the senders' rates added up, phase by phase."""
    settings = dict(parts[0].get("settings") or {})
    phases = [list((p.get("settings") or {}).get("phases") or []) for p in parts]
    if phases[0] and all(len(ph) == len(phases[0]) for ph in phases):
        settings["phases"] = [
            {**phase, "rate": sum(float(ph[i]["rate"]) for ph in phases)}
            for i, phase in enumerate(phases[0])
        ]
    return settings


def _check(senders: list[SenderRecord], lags: list[float]) -> dict[str, Any]:
    """The merged run's check: valid only if every sender's is, with each one's reasons, and
    the send lags over every attempt."""
    return {
        "valid": all(s.check.valid for s in senders),
        "reasons": [f"sender {s.sender}: {r}" for s in senders for r in s.check.reasons],
        "send_lag_p50_s": percentile(lags, 50),
        "send_lag_p99_s": percentile(lags, 99),
        "send_lag_max_s": max(lags, default=None),
    }


def merge_senders(*, parts: Sequence[Mapping[str, Any]]) -> MergedLoad:
    """One run from K senders' results (the generator's JSON, sender i at `parts[i]`): every
    attempt renumbered and moved onto the earliest sender's clock, ordered by scheduled time;
    each sender's self-check kept, and the run's check valid only if all of theirs are."""
    if not parts:
        raise ValueError("no senders' records to merge")
    k = len(parts)
    columns = list(parts[0]["columns"])
    start = min(float(p.get("t0_wall") or 0.0) for p in parts)
    shifts = [float(p.get("t0_wall") or 0.0) - start for p in parts]
    rows: list[list[Any]] = []
    senders = []
    for i, part in enumerate(parts):
        rows += _rows(part, columns=columns, index=i, k=k, shift=shifts[i])
        senders.append(
            SenderRecord(
                sender=i,
                visits=int(part.get("visits") or 0),
                attempts=len(part["attempts"]),
                start_s=shifts[i],
                check=generator_output(dict(part)).check,
            )
        )
    col = {c: i for i, c in enumerate(columns)}
    rows.sort(key=lambda r: (r[col["intended"]], r[col["visit"]], r[col["attempt"]]))
    first = shifts.index(0.0)
    result = {
        **parts[0],
        "settings": _settings(parts),
        "t0_monotonic": parts[first].get("t0_monotonic"),
        "t0_wall": start,
        "visits": sum(s.visits for s in senders),
        "sent_all_s": max(float(p["sent_all_s"]) + d for p, d in zip(parts, shifts, strict=True)),
        "finished_s": max(float(p["finished_s"]) + d for p, d in zip(parts, shifts, strict=True)),
        "peak_in_flight": _peak_in_flight(rows, sent=col["sent"], end=col["end"]),
        "check": _check(senders, sorted(r[col["sent"]] - r[col["intended"]] for r in rows)),
        "columns": columns,
        "attempts": rows,
        "events": [e for p, d in zip(parts, shifts, strict=True) for e in _shifted(p["events"], d)],
        "watches": [
            w for p, d in zip(parts, shifts, strict=True) for w in _shifted(p["watches"], d)
        ],
    }
    return MergedLoad(result=result, senders=senders)

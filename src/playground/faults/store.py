"""faults.json: one file per fault run, rewritten atomically after every finished fault."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playground.faults.records import FaultFailed, FaultRecord
from playground.results import write_json_atomic

SCHEMA_VERSION = 1


@dataclass
class FaultStore:
    """faults.json, rewritten atomically after every finished fault."""

    run_dir: Path
    data: dict[str, Any]  # faults.json as it is on disk

    @property
    def path(self) -> Path:
        return self.run_dir / "faults.json"

    @classmethod
    def create(cls, *, results_dir: Path, run_id: str, header: dict[str, Any]) -> FaultStore:
        run_dir = results_dir / run_id
        run_dir.mkdir(parents=True, exist_ok=False)
        store = cls(
            run_dir,
            {
                "schema_version": SCHEMA_VERSION,
                "run_id": run_id,
                **header,
                "finished_at": None,
                "runs": [],
            },
        )
        store.save()
        return store

    def add(self, run: FaultRecord | FaultFailed) -> None:
        self.data["runs"].append(run.to_json())
        self.save()

    def save(self) -> None:
        write_json_atomic(self.path, self.data)


def problems(data: dict[str, Any]) -> list[str]:
    """Every problem any fault found, one line each (empty: every mode behaved)."""
    out = []
    for run in data.get("runs", []):
        if run.get("error"):
            out.append(f"{run['fault']} {run['compose_file']}: {run['error']}")
            continue
        for t in run["targets"]:
            out += [f"{run['fault']} {t['name']}: {p}" for p in t.get("problems", [])]
    return out

"""What every fault is: a name, the scenarios it applies to, and a run that returns its record.

Each fault is one class in its own module (outage, slowdown, overload): it drives its phases
on a :class:`~playground.faults.session.Session` and checks what the prober saw against what a
serving mode must do, returning the dict faults.json keeps for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from playground.faults.session import Session
from playground.scenarios import Target


class Fault:
    name: ClassVar[str]
    # The service the fault stops, if it stops one; the others act on the load instead.
    stopped_service: ClassVar[str | None] = None

    def applies(self, target: Target) -> bool:
        return True

    def run(self, *, session: Session, run_id: str, raw_dir: Path | None) -> dict:
        raise NotImplementedError

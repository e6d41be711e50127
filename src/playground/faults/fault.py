"""What every fault is: a name, the scenarios it applies to, and a run that returns its record.

Each fault is one class in its own module (outage, slowdown, overload): it drives its phases
on a :class:`~playground.faults.faultsession.FaultSession` and checks what the prober saw against what a
serving mode must do, returning its verdict on each (typed in :mod:`playground.faults.results`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from playground.core.target import Target
from playground.faults.containers import container_checks
from playground.faults.faultsession import FaultSession, running
from playground.faults.probe import Outcome, Prober
from playground.faults.results import Burst, ContainerCheck, FaultFindings, Verdict


@dataclass(frozen=True)
class Phases:
    """When each phase of a fault began, on the fault run's clock (s)."""

    start: float  # the probe started
    fault_at: float  # the fault began (the delay raised, `stop` sent)
    in_effect_at: float  # it was in full effect (an outage: once `stop` had returned)
    back_at: float  # it was over (the delay back, `start` returned)
    end: float  # the probe stopping


@dataclass(frozen=True)
class Observed:
    """What one target went through in a fault: what :meth:`Fault.judge` reads."""

    session: FaultSession
    target: Target
    clients: int  # the prober's concurrency
    outcomes: Sequence[Outcome]
    marks: Phases
    containers: dict[str, ContainerCheck]
    before: Burst  # a burst before the fault
    after: Burst  # the same burst after it


class Fault:
    name: ClassVar[str]
    # The service the fault stops, if it stops one; the others act on the load instead.
    stopped_service: ClassVar[str | None] = None

    def applies(self, target: Target) -> bool:
        return True

    def run(self, *, session: FaultSession, run_id: str, raw_dir: Path | None) -> FaultFindings:
        """Probe every target through the fault's phases, then judge each target against
        what it did before the fault (a burst, its server state)."""
        s, skip = session.settings, self.stopped_service
        bursts_before = {t.name: session.burst(t) for t in session.targets}
        states_before = session.states(skip=skip)
        probers = session.probers(delay=s.delay, concurrency=s.clients)
        session.record_load(concurrency=s.clients, delay=s.delay)
        self.describe(session)
        with running(probers):
            marks = self.phases(session, probers)
            results = [p.stop() for p in probers]
        session.mark("probe stopped")
        bursts_after = {t.name: session.burst(t) for t in session.targets}
        containers = container_checks(before=states_before, after=session.states(skip=skip))
        out: list[Verdict] = [
            self.judge(
                Observed(
                    session=session,
                    target=target,
                    clients=prober.concurrency,
                    outcomes=outcomes,
                    marks=marks,
                    containers=containers,
                    before=bursts_before[target.name],
                    after=bursts_after[target.name],
                )
            )
            for target, prober, outcomes in zip(session.targets, probers, results, strict=True)
        ]
        return FaultFindings(
            fault=self.name, stopped_service=skip, containers=containers, targets=out
        )

    def describe(self, session: FaultSession) -> None:
        """Record, for the reader, what the fault will do (commands, a note)."""

    def phases(self, session: FaultSession, probers: Sequence[Prober]) -> Phases:
        """Drive the fault while the probers run; when each of its phases began."""
        raise NotImplementedError

    def judge(self, seen: Observed) -> Verdict:
        """The phases of one target's outcomes and what must hold of them."""
        raise NotImplementedError

"""The whole fault run: for each compose file, up once, every fault that applies, down."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial

from playground.core.compose import Docker, scenario_up
from playground.core.runstore import RunStore
from playground.core.target import Target
from playground.faults.fault import Fault
from playground.faults.faultsession import FaultSession, probe_port
from playground.faults.registry import runner
from playground.faults.results import FaultFailed, FaultRan, FaultSettings, FaultsRun

#: faults.json's store: the core's, holding a fault run.
FaultStore = RunStore[FaultsRun]


def applies(fault: str, target: Target) -> bool:
    """Whether the fault named ``fault`` applies to ``target`` (db-outage needs a database)."""
    return runner(fault).applies(target)


def run_faults(
    *,
    docker: Docker,
    targets: Sequence[Target],
    faults: Sequence[str],
    settings: FaultSettings,
    store: FaultStore,
    info: Callable[[str], None] = lambda line: None,
    warn: Callable[[str], None] = lambda line: None,
) -> None:
    """For each compose file: up once, every fault that applies in turn, down."""
    by_file: dict[tuple[str, ...], list[Target]] = {}
    for t in targets:
        probe_port(t)  # every target must have one, before anything is brought up
        by_file.setdefault(t.compose_files, []).append(t)
    for compose_file, group in by_file.items():
        todo = [f for f in faults if any(applies(f, t) for t in group)]
        if not todo:
            continue
        info(
            f"[bold]{' + '.join(compose_file)}[/bold]: {', '.join(todo)} on "
            + ", ".join(t.name for t in group)
        )
        with scenario_up(
            docker,
            compose_file,
            failed=partial(
                _failed, store=store, compose_file=compose_file, group=group, faults=todo
            ),
            warn=warn,
            wait_timeout_s=settings.wait_timeout_s,
        ) as up:
            for fault in todo if up else ():
                session = FaultSession(
                    docker=docker,
                    compose_file=compose_file,
                    targets=tuple(t for t in group if applies(fault, t)),
                    settings=settings,
                )
                _keep(
                    store, one_fault(session=session, fault=runner(fault), store=store, info=info)
                )


def _failed(
    error: str,
    *,
    store: FaultStore,
    compose_file: tuple[str, ...],
    group: Sequence[Target],
    faults: Sequence[str],
) -> None:
    """A Docker error (the scenario did not come up, or went wrong meanwhile): each fault of
    the file gets a record of it."""
    for fault in faults:
        targets = tuple(t for t in group if applies(fault, t))
        failed = FaultFailed.of(
            fault=fault, compose_file=compose_file, targets=targets, error=error
        )
        _keep(store, failed)


def _keep(store: FaultStore, record: FaultRan | FaultFailed) -> None:
    """One more fault in the run, on disk at once."""
    store.run.add(record)
    store.save()


def one_fault(
    *, session: FaultSession, fault: Fault, store: FaultStore, info: Callable[[str], None]
) -> FaultRan:
    s = session.settings
    info(f"  {fault.name}: " + ", ".join(f"{t.name} (c={s.clients(t)})" for t in session.targets))
    session.record("up", "-d", "--wait")
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    result = fault.run(session=session, run_id=store.run.run_id, raw_dir=store.run_dir / "raw")
    session.record("down", "--volumes")
    return FaultRan.of(
        result,
        compose_file=session.compose_file,
        started_at=started,
        marks=session.marks,
        commands=session.commands,
    )

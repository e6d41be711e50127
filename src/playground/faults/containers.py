"""What Docker says about a scenario's containers before and after a fault: did anything
restart, stop, run out of memory or lose a server process (a crashed worker)?"""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.compose import ComposeFiles, Docker
from playground.core.sampling import ProcStat, process_tree
from playground.faults.results import ContainerCheck


@dataclass(frozen=True)
class ServerState:
    """What `docker inspect` and `docker top` say about one app container."""

    service: str
    container: str | None
    status: str | None
    started_at: str | None
    restarts: int
    oom_killed: bool
    processes: tuple[tuple[int, str], ...]  # the server's own process tree: (pid, command)


def server_state(*, docker: Docker, compose_file: ComposeFiles, service: str) -> ServerState:
    cid = docker.container_id(compose_file, service)
    state = docker.state(cid) if cid else None
    if not cid or state is None:
        return ServerState(service, cid or None, None, None, 0, False, ())
    root = state.pid
    rows = docker.processes(cid)
    commands = {pid: cmd for pid, _, cmd in rows}
    stats = [
        ProcStat(pid=pid, ppid=ppid, threads=0, rss_kb=0, cpu_ticks=0) for pid, ppid, _ in rows
    ]
    tree = [(s.pid, commands[s.pid][:120]) for s in process_tree(stats, root)] if root else []
    return ServerState(
        service=service,
        container=cid,
        status=state.status,
        started_at=state.started_at,
        restarts=state.restarts,
        oom_killed=state.oom_killed,
        processes=tuple(sorted(tree)),
    )


def compare_states(*, before: ServerState, after: ServerState) -> ContainerCheck:
    """Did the container restart, stop, or lose a server process (a crashed worker)?"""
    lost = sorted(set(before.processes) - set(after.processes))
    restarted = (
        after.container != before.container
        or after.started_at != before.started_at
        or after.restarts > before.restarts
    )
    problems = []
    if after.status != "running":
        problems.append(f"{after.service} is {after.status or 'gone'}")
    if restarted:
        problems.append(f"{after.service} restarted")
    if after.oom_killed:
        problems.append(f"{after.service} was killed for lack of memory")
    if lost:
        problems.append(
            f"{after.service} lost {len(lost)} server process(es): "
            + ", ".join(f"{pid} {cmd}" for pid, cmd in lost[:4])
        )
    return ContainerCheck(
        service=after.service,
        status=after.status,
        restarts=after.restarts,
        restarted=restarted,
        processes_before=len(before.processes),
        processes_after=len(after.processes),
        lost_processes=tuple(lost),
        problems=tuple(problems),
    )


def container_checks(
    *, before: dict[str, ServerState], after: dict[str, ServerState]
) -> dict[str, ContainerCheck]:
    """Each container seen both before and after the fault, checked, by service."""
    return {s: compare_states(before=before[s], after=after[s]) for s in before if s in after}


def check_problems(checks: dict[str, ContainerCheck]) -> list[str]:
    """Every container's problems, in order."""
    return [p for c in checks.values() for p in c.problems]

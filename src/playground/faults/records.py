"""What a fault found, typed, and the JSON form faults.json keeps of it.

Each fault judges each target into a verdict (:class:`SlowdownVerdict`, :class:`OutageVerdict`,
:class:`OverloadVerdict`); a fault's run over one compose file is a :class:`FaultRun`, recorded
with its session as a :class:`FaultRecord`, or a :class:`FaultFailed` when the compose file
could not be brought up. ``to_json`` writes each under the keys, and in the order, faults.json
has always had; the report (:mod:`.render`) reads that JSON back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from playground.faults.analysis import PhaseStats, stuck_verdict, timeline
from playground.faults.containers import ContainerCheck, check_problems, checks_json
from playground.faults.probe import Burst, Outcome
from playground.scenarios import Target
from playground.tools.output import LoadResult

Json = dict[str, Any]


@dataclass(frozen=True)
class Probed:
    """Which target was probed and how: the start of its record."""

    name: str
    title: str
    service: str
    url: str | None  # as a reader requests it from the host
    concurrency: int
    delay: float

    @classmethod
    def of(cls, target: Target, *, clients: int, delay: float) -> Probed:
        return cls(
            name=target.name,
            title=target.title,
            service=target.service,
            url=target.host_url(delay=delay),
            concurrency=clients,
            delay=delay,
        )

    def to_json(self) -> Json:
        return asdict(self)


@dataclass(frozen=True)
class Aftermath:
    """What every fault checks after it: stuck workers (a burst against the one before), the
    answers second by second, and the verdict in words."""

    burst_before: Burst
    burst_after: Burst
    stuck: bool
    stuck_reason: str
    timeline: list[dict[str, float]]
    problems: list[str]
    notes: list[str]

    @classmethod
    def of(
        cls,
        outcomes: Sequence[Outcome],
        *,
        bursts: tuple[Burst, Burst],
        stuck: tuple[bool, str],
        problems: list[str],
        notes: list[str],
    ) -> Aftermath:
        """From the prober's outcomes, the bursts before and after, and the stuck verdict."""
        return cls(*bursts, *stuck, timeline(outcomes), problems, notes)

    @classmethod
    def judged(
        cls,
        outcomes: Sequence[Outcome],
        before: Burst,
        after: Burst,
        containers: dict[str, ContainerCheck],
        problems: list[str],
        notes: list[str],
    ) -> Aftermath:
        """The stuck verdict from the bursts; the problems found so far, then stuck workers
        and the containers' own problems."""
        stuck, reason = stuck_verdict(before=before, after=after)
        found = [*problems, *([reason] if stuck else []), *check_problems(containers)]
        return cls.of(
            outcomes, bursts=(before, after), stuck=(stuck, reason), problems=found, notes=notes
        )

    def to_json(self, *, containers: dict[str, ContainerCheck] | None = None) -> Json:
        """The record's last keys; an overload's containers go between the bursts and the
        timeline."""
        out: Json = {
            "burst_before": asdict(self.burst_before),
            "burst_after": asdict(self.burst_after),
            "stuck": self.stuck,
            "stuck_reason": self.stuck_reason,
        }
        if containers is not None:
            out["containers"] = checks_json(containers)
        return {**out, "timeline": self.timeline, "problems": self.problems, "notes": self.notes}


def _phases_json(phases: dict[str, PhaseStats]) -> Json:
    return {name: stats.to_json() for name, stats in phases.items()}


@dataclass(frozen=True)
class SlowdownVerdict:
    """upstream-slowdown on one target: latency before, while slow and after; the time to
    settle back under ``settle_limit_s``."""

    probed: Probed
    slow_delay: float
    requests: int
    kinds: dict[str, int]
    phases: dict[str, PhaseStats]  # before, slow, after
    settle_s: float | None
    settle_limit_s: float
    aftermath: Aftermath

    def to_json(self) -> Json:
        return {
            **self.probed.to_json(),
            "slow_delay": self.slow_delay,
            "requests": self.requests,
            "kinds": self.kinds,
            "phases": _phases_json(self.phases),
            "settle_s": self.settle_s,
            "settle_limit_s": self.settle_limit_s,
            **self.aftermath.to_json(),
        }


@dataclass(frozen=True)
class OutageVerdict:
    """upstream-outage or db-outage on one target: prompt errors while the service was down,
    bounded by the upstream timeout, and the time to recover once it was back."""

    probed: Probed
    requests: int
    kinds: dict[str, int]
    phases: dict[str, PhaseStats]  # before, stopping, during, after
    longest_while_down_s: float | None
    answer_bound_s: float
    recover_s: float | None
    requests_after_return: int  # 0: the recovery was not measured
    aftermath: Aftermath

    def to_json(self) -> Json:
        return {
            **self.probed.to_json(),
            "requests": self.requests,
            "kinds": self.kinds,
            "phases": _phases_json(self.phases),
            "longest_while_down_s": self.longest_while_down_s,
            "answer_bound_s": self.answer_bound_s,
            "recover_s": self.recover_s,
            "requests_after_return": self.requests_after_return,
            **self.aftermath.to_json(),
        }


@dataclass(frozen=True)
class OverloadVerdict:
    """overload on one target: ab's report (None: it printed none, ``ab_error`` says why),
    what regular clients saw meanwhile, where the load was shed, and the drain afterwards."""

    probed: Probed
    ab: LoadResult | None
    ab_exit_code: int
    ab_error: str | None
    probe: PhaseStats
    probe_concurrency: int
    shed: list[str]
    drain_s: float
    drain_answer: str
    containers: dict[str, ContainerCheck]
    aftermath: Aftermath

    def ab_json(self) -> Json:
        ab = self.ab
        if ab is None:
            return {"exit_code": self.ab_exit_code, "error": self.ab_error}
        return {
            "complete": ab.complete,
            "failed": ab.failed,
            "failures": ab.failures,
            "non_2xx": ab.non_2xx,
            "rps": ab.rps,
            "time_taken_s": ab.time_taken_s,
            "latency_ms": ab.latency_ms,
            "connect_max_ms": ab.connect_max_ms,
            "exit_code": self.ab_exit_code,
            "error": None,
        }

    def to_json(self) -> Json:
        return {
            **self.probed.to_json(),
            "ab": self.ab_json(),
            "probe": self.probe.to_json(),
            "probe_concurrency": self.probe_concurrency,
            "shed": self.shed,
            "drain_s": self.drain_s,
            "drain_answer": self.drain_answer,
            **self.aftermath.to_json(containers=self.containers),
        }


class Verdict(Protocol):
    """A fault's verdict on one target, whichever fault it is."""

    def to_json(self) -> Json: ...


@dataclass(frozen=True)
class FaultRun:
    """One fault on the targets of one compose file: each target's verdict and every
    container's check."""

    fault: str
    stopped_service: str | None
    containers: dict[str, ContainerCheck]
    targets: Sequence[Verdict]

    def to_json(self) -> Json:
        return {
            "fault": self.fault,
            "stopped_service": self.stopped_service,
            "containers": checks_json(self.containers),
            "targets": [t.to_json() for t in self.targets],
        }


@dataclass(frozen=True)
class FaultRecord:
    """A fault run with its session: the files, when, the marks and the commands by hand."""

    run: FaultRun
    compose_file: tuple[str, ...]  # the scenario's file, then its overrides
    started_at: str
    marks: list[dict[str, float | str]]
    commands: list[str]

    def to_json(self) -> Json:
        return {
            **self.run.to_json(),
            "compose_file": self.compose_file[0],
            "overrides": list(self.compose_file[1:]),
            "started_at": self.started_at,
            "marks": self.marks,
            "commands": self.commands,
            "error": None,
        }


@dataclass(frozen=True)
class FaultFailed:
    """A fault that could not run: its compose file did not come up, or Docker failed."""

    fault: str
    compose_file: tuple[str, ...]
    targets: tuple[Target, ...]
    error: str

    def to_json(self) -> Json:
        return {
            "fault": self.fault,
            "compose_file": self.compose_file[0],
            "overrides": list(self.compose_file[1:]),
            "targets": [{"name": t.name, "title": t.title} for t in self.targets],
            "error": self.error,
        }

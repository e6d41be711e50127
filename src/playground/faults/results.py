"""A fault run's results (``playground faults``): typed, with the one JSON form faults.json keeps.

The file is a :class:`FaultsRun`: the header every run has, then one :class:`FaultRan` per
fault and compose file (or a :class:`FaultFailed` where the file could not be brought up).
Each record holds every target's verdict, one class per kind of fault
(:class:`SlowdownVerdict`, :class:`OutageVerdict`, :class:`OverloadVerdict`), each starting with
the target as it was probed (:class:`Probed`) and ending with what every fault checks after
it (:class:`Aftermath`). Those two stand inline: their keys are the verdict's own, as
faults.json has always had them. The conversion is :mod:`playground.core.jsonmodel`'s, as for
every run; ``faults/`` fills these in, :mod:`playground.faults.render` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Protocol

from playground.core import jsonmodel
from playground.core.containerstate import WAIT_TIMEOUT_S
from playground.core.jsonmodel import ModelError, Number, doc
from playground.core.results import SCHEMA_VERSION, RunHeader
from playground.core.target import Target
from playground.core.tools.output import LoadResult
from playground.faults import registry


@dataclass(frozen=True)
class FaultSettings:
    """The options every fault reads (``playground faults``' flags)."""

    concurrency: int | None = doc("-c: probe clients per target (null: the target's own c)")
    delay: Number = doc("--delay: the normal upstream delay, s", 1.0)
    slow_delay: Number = doc("--slow-delay: the delay while the upstream is slow, s", 5.0)
    baseline_s: Number = doc("--baseline: normal load before the fault, s", 5.0)
    fault_s: Number = doc("--fault-seconds: how long the fault lasts, s", 10.0)
    recovery_s: Number = doc("--recovery: normal load after it, s", 15.0)
    probe_timeout_s: Number = doc(
        "--probe-timeout: a request with no answer by then counts as hung, s", 60.0
    )
    overload_concurrency: int = doc("--overload-concurrency: ab's -c under overload", 2000)
    overload_s: Number = doc("--overload-seconds: ab's time limit (-t) under overload, s", 30.0)
    drain_limit_s: Number = doc(
        "after an overload, how long a fresh request may wait for its answer, s", 240.0
    )
    wait_timeout_s: int = doc(
        "--wait-timeout: how long a bring-up may take to be healthy, s", WAIT_TIMEOUT_S
    )

    def clients(self, target: Target) -> int:
        return self.concurrency or target.concurrency


@dataclass(frozen=True)
class FaultRunSettings:
    """The options of a `playground faults`, as its header's `settings` keeps them."""

    faults: list[str] = doc("--fault: the faults run, in order", factory=list)
    options: FaultSettings | None = doc("the options every fault reads", inline=True)
    extra: dict[str, Any] = doc("keys this version does not know", factory=dict)


@dataclass(frozen=True)
class PhaseStats:
    """What the requests that started in one phase of a fault got."""

    from_s: float = doc("the phase's start, s since the fault run started", 0.0)
    to_s: float = doc("the phase's end, s", 0.0)
    requests: int = doc("requests that started in the phase", 0)
    kinds: dict[str, int] = doc('answers by kind: "200", "502", "timeout", ...', factory=dict)
    p50_s: float | None = doc("median latency of the successful answers, s")
    p90_s: float | None = doc("90th percentile of the successful answers, s")
    max_s: float | None = doc("slowest successful answer, s")
    excess_p50_s: float | None = doc("median time beyond the delay asked for (queueing), s")
    excess_max_s: float | None = doc("most time beyond the delay asked for, s")
    ok_rps: float = doc("successful answers per second that arrived in the phase", 0.0)
    longest_s: float | None = doc("the longest request of any outcome, s")


@dataclass(frozen=True)
class Burst:
    """k requests sent at once: their statuses or errors and how long the slowest took."""

    k: int = doc("requests sent at once", 0)
    delay: float = doc("the delay each asked for, s", 0.0)
    kinds: dict[str, int] = doc("answers by kind", factory=dict)
    seconds: float = doc("how long the slowest took, s", 0.0)

    @property
    def ok(self) -> bool:
        return self.kinds == {"200": self.k}


@dataclass(frozen=True)
class ContainerCheck:
    """One app container after a fault against before it."""

    service: str = doc("the compose service", "")
    status: str | None = doc("Docker's status after the fault (null: gone)")
    restarts: int = doc("Docker's restart count after the fault", 0)
    restarted: bool = doc("another container, start time or restart count than before", False)
    processes_before: int = doc("server processes before the fault", 0)
    processes_after: int = doc("server processes after it", 0)
    lost_processes: tuple[tuple[int, str], ...] = doc(
        "[pid, command] of each server process lost (a crashed worker)", ()
    )
    problems: tuple[str, ...] = doc("one sentence each; none: the container came through", ())


@dataclass(frozen=True)
class Probed:
    """Which target was probed and how: the start of its verdict."""

    name: str = doc("target name from the registry", "")
    title: str = doc("human title of the target", "")
    service: str = doc("the service the probe is aimed at", "")
    url: str | None = doc("the URL as a reader requests it from the host")
    concurrency: int = doc("probe clients (overload: ab's -c)", 0)
    delay: float = doc("the normal upstream delay, s", 0.0)

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


@dataclass(frozen=True)
class Aftermath:
    """What every fault checks after it: stuck workers (a burst against the one before), the
    answers second by second, and the verdict in words."""

    burst_before: Burst = doc("a burst of the tutorial concurrency before the fault", factory=Burst)
    burst_after: Burst = doc("the same burst after it", factory=Burst)
    stuck: bool = doc("the burst after took too much longer: capacity was lost", False)
    stuck_reason: str = doc("the two bursts' times, in words", "")
    containers: dict[str, ContainerCheck] | None = doc(
        "overload only: each container's check, by service", omit_none=True
    )
    timeline: list[dict[str, Any]] = doc(
        "answers by kind per second, by the second they arrived (`t`, then a count per kind)",
        factory=list,
    )
    problems: list[str] = doc("every problem found; none: the mode behaved", factory=list)
    notes: list[str] = doc("what else the report says about the target", factory=list)


@dataclass(frozen=True)
class SlowdownVerdict:
    """upstream-slowdown on one target: latency before, while slow and after; the time to
    settle back under ``settle_limit_s``."""

    probed: Probed = doc("the target as probed", factory=Probed, inline=True)
    slow_delay: float = doc("the delay while the upstream was slow, s", 0.0)
    requests: int = doc("probe requests in all", 0)
    kinds: dict[str, int] = doc("answers by kind", factory=dict)
    phases: dict[str, PhaseStats] = doc("`before`, `slow`, `after`", factory=dict)
    settle_s: float | None = doc("time to settle back after the slowdown (null: never), s")
    settle_limit_s: float = doc("the median latency that counts as settled, s", 0.0)
    aftermath: Aftermath = doc("the checks after the fault", factory=Aftermath, inline=True)

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and "slow_delay" in data


@dataclass(frozen=True)
class OutageVerdict:
    """upstream-outage or db-outage on one target: prompt errors while the service was down,
    bounded by the upstream timeout, and the time to recover once it was back."""

    probed: Probed = doc("the target as probed", factory=Probed, inline=True)
    requests: int = doc("probe requests in all", 0)
    kinds: dict[str, int] = doc("answers by kind", factory=dict)
    phases: dict[str, PhaseStats] = doc("`before`, `stopping`, `during`, `after`", factory=dict)
    longest_while_down_s: float | None = doc("the longest answer while the service was down, s")
    answer_bound_s: float = doc("what that answer should stay under, s", 0.0)
    recover_s: float | None = doc("time to recover once the service was back (null: not), s")
    requests_after_return: int | None = doc(
        "requests started after the service came back; 0: the recovery was not measured"
    )
    aftermath: Aftermath = doc("the checks after the fault", factory=Aftermath, inline=True)

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and "answer_bound_s" in data


@dataclass(frozen=True)
class AbFigures:
    """ab's own report of the overload."""

    complete: int = doc("complete requests", 0)
    failed: int = doc("failed requests (failure events)", 0)
    failures: dict[str, int] = doc("by kind: connect, receive, length, exceptions", factory=dict)
    non_2xx: int = doc("non-2xx answers", 0)
    rps: float = doc("ab's requests/s", 0.0)
    time_taken_s: float = doc("ab's run time, s", 0.0)
    latency_ms: dict[str, float] = doc("p50, p90, p99, max, ms", factory=dict)
    connect_max_ms: float | None = doc("slowest TCP connect, ms")

    @classmethod
    def of(cls, ab: LoadResult) -> AbFigures:
        return cls(
            complete=ab.complete,
            failed=ab.failed,
            failures=ab.failures,
            non_2xx=ab.non_2xx,
            rps=ab.rps,
            time_taken_s=ab.time_taken_s,
            latency_ms=ab.latency_ms,
            connect_max_ms=ab.connect_max_ms,
        )


@dataclass(frozen=True)
class AbOutcome:
    """How ab's overload ended: its figures, or why it printed none."""

    figures: AbFigures | None = doc("ab's report (absent: it printed none)", inline=True)
    exit_code: int = doc("ab's exit code", 0)
    error: str | None = doc("why ab printed no report")


@dataclass(frozen=True)
class OverloadVerdict:
    """overload on one target: ab's report, what regular clients saw meanwhile, where the load
    was shed, and the drain afterwards."""

    probed: Probed = doc("the target as probed", factory=Probed, inline=True)
    ab: AbOutcome = doc("ab's report, or why there is none", factory=AbOutcome)
    probe: PhaseStats = doc("what regular clients got meanwhile", factory=PhaseStats)
    probe_concurrency: int = doc("those clients", 0)
    shed: list[str] = doc("where the load was shed, in words", factory=list)
    drain_s: float = doc("until a fresh request was answered afterwards, s", 0.0)
    drain_answer: str = doc("that request's answer", "")
    aftermath: Aftermath = doc("the checks after the fault", factory=Aftermath, inline=True)

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and "ab" in data


class Verdict(Protocol):
    """A fault's verdict on one target, whichever fault it is: it starts with the target as
    probed and ends with what every fault checks after it. Each fault's own class is named in
    the registry of faults (:mod:`playground.faults.registry`), which faults.json is read by."""

    @property
    def probed(self) -> Probed: ...

    @property
    def aftermath(self) -> Aftermath: ...


#: A target's verdict in faults.json: one of the registered faults' verdict classes.
AnyVerdict = Annotated[Verdict, jsonmodel.OneOf(registry.verdicts)]


@dataclass(frozen=True)
class FaultFindings:
    """One fault on the targets of one compose file: each target's verdict and every
    container's check."""

    fault: str = doc("the fault: upstream-slowdown, upstream-outage, db-outage, overload", "")
    stopped_service: str | None = doc("the service an outage stopped")
    containers: dict[str, ContainerCheck] = doc("each container's check, by service", factory=dict)
    targets: list[AnyVerdict] = doc("each target's verdict", factory=list)


@dataclass(frozen=True)
class FaultRan:
    """A fault run with its session: the files, when, the marks and the commands by hand."""

    run: FaultFindings = doc("the fault and what it found", factory=FaultFindings, inline=True)
    compose_file: str = doc("the scenario's compose file", "")
    overrides: list[str] = doc("the files over it", factory=list)
    started_at: str | None = doc("ISO time the fault started")
    marks: list[dict[str, float | str]] = doc(
        "the fault's moments: `t` (s since it started) and `label`", factory=list
    )
    commands: list[str] = doc("what a reader types to do it by hand", factory=list)
    error: str | None = doc("always null here (see FaultFailed)")

    @classmethod
    def of(
        cls,
        run: FaultFindings,
        *,
        compose_file: tuple[str, ...],
        started_at: str,
        marks: list[dict[str, float | str]],
        commands: list[str],
    ) -> FaultRan:
        """``compose_file``: the scenario's file, then its overrides."""
        first, *overrides = compose_file
        return cls(run, first, overrides, started_at, marks, commands)

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and not data.get("error")


@dataclass(frozen=True)
class TargetName:
    """A target a failed fault would have probed."""

    name: str = doc("target name from the registry", "")
    title: str = doc("human title of the target", "")


@dataclass(frozen=True)
class FaultFailed:
    """A fault that could not run: its compose file did not come up, or Docker failed."""

    fault: str = doc("the fault", "")
    compose_file: str = doc("the scenario's compose file", "")
    overrides: list[str] = doc("the files over it", factory=list)
    targets: list[TargetName] = doc("the targets it would have probed", factory=list)
    error: str = doc("why it could not run", "")

    @classmethod
    def of(
        cls, *, fault: str, compose_file: tuple[str, ...], targets: tuple[Target, ...], error: str
    ) -> FaultFailed:
        first, *overrides = compose_file
        names = [TargetName(t.name, t.title) for t in targets]
        return cls(fault, first, overrides, names, error)

    @classmethod
    def fits(cls, data: Any) -> bool:
        return isinstance(data, dict) and bool(data.get("error"))


@dataclass
class FaultsRun(RunHeader):
    """One `playground faults` run: its header and a record per fault and compose file."""

    FILE: ClassVar[str] = "faults.json"

    settings: FaultRunSettings | None = doc("the faults and their options (null: not recorded)")
    kind: str = doc("`faults`", "faults")

    runs: list[FaultRan | FaultFailed] = doc("one per fault and compose file", factory=list)

    def add(self, record: FaultRan | FaultFailed) -> None:
        self.runs.append(record)

    def problems(self) -> list[str]:
        """Every problem any fault found, one line each (empty: every mode behaved)."""
        out = []
        for record in self.runs:
            if isinstance(record, FaultFailed):
                out.append(f"{record.fault} {record.compose_file}: {record.error}")
                continue
            for t in record.run.targets:
                out += [f"{record.run.fault} {t.probed.name}: {p}" for p in t.aftermath.problems]
        return out

    @classmethod
    def from_json(cls, data: Any, *, where: str = "faults.json") -> FaultsRun:
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            raise ModelError(f"{where}: not a fault run of schema {SCHEMA_VERSION}")
        run: FaultsRun = jsonmodel.from_json(cls, data, where)
        return run


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (FaultsRun, "FaultsRun (the whole of `faults.json`)"),
    (FaultRunSettings, "FaultRunSettings (`settings`)"),
    (FaultSettings, "FaultSettings (inline in `settings`)"),
    (FaultRan, "FaultRan (each of `runs` that ran)"),
    (FaultFindings, "FaultFindings (inline in a FaultRan)"),
    (FaultFailed, "FaultFailed (each of `runs` that could not run)"),
    (TargetName, "TargetName (each of a FaultFailed's `targets`)"),
    (ContainerCheck, "ContainerCheck (each of `containers`)"),
    (SlowdownVerdict, "SlowdownVerdict (each of `targets`, upstream-slowdown)"),
    (OutageVerdict, "OutageVerdict (each of `targets`, upstream-outage and db-outage)"),
    (OverloadVerdict, "OverloadVerdict (each of `targets`, overload)"),
    (Probed, "Probed (inline at the start of every verdict)"),
    (Aftermath, "Aftermath (inline at the end of every verdict)"),
    (PhaseStats, "PhaseStats (each of `phases`, and an overload's `probe`)"),
    (Burst, "Burst (`burst_before`, `burst_after`)"),
    (AbOutcome, "AbOutcome (an overload's `ab`)"),
    (AbFigures, "AbFigures (inline in `ab` when ab printed its report)"),
)


#: The schema page's lines before this kind's tables.
SCHEMA_INTRO: tuple[str, ...] = (
    "# A fault run (`playground faults`)",
    "",
    "`results/<run-id>-faults/faults.json`: the header above (`settings`: the faults and",
    "their options), then one record per fault and compose file",
    "(`src/playground/faults/results.py`). A key marked inline is not written itself: the",
    "keys of the class it holds stand in its place.",
    "",
)

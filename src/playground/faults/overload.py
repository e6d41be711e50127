"""``overload``: ApacheBench at c=2000 from inside the scenario's network, far above what any
mode holds in flight. No process may crash and no container restart; where the load was shed
(refused connections, resets, or queueing) is reported, with what a few regular clients
probing from the host saw meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from playground.core import load as loadmod
from playground.core.compose import shown
from playground.core.notation import EM_DASH
from playground.core.target import Target
from playground.core.tools.ab import ab_command
from playground.core.tools.output import LoadOutputError, LoadResult
from playground.core.verdicts import queued, syn_retransmitted
from playground.faults.analysis import (
    phase_stats,
    stuck_verdict,
    unexpected_answers,
)
from playground.faults.captured import aftermath
from playground.faults.containers import check_problems, container_checks
from playground.faults.fault import Fault
from playground.faults.faultsession import FaultSession, probe_port, running
from playground.faults.probe import Outcome, Prober, timed_request
from playground.faults.results import (
    AbFigures,
    AbOutcome,
    Burst,
    FaultFindings,
    FaultSettings,
    OverloadVerdict,
    PhaseStats,
    Probed,
)

OVERLOAD_PROBE_CONCURRENCY = 10


# Bursts after a slow first one before the verdict is "capacity lost" (see Overload.one).
SETTLE_BURSTS = 2
#: With the median not queued (:func:`~playground.core.verdicts.queued`), a p99 beyond this
#: many upstream delays still means that some requests queued.
TAIL_QUEUED_FACTOR = 3.0


def overload_command(*, target: Target, settings: FaultSettings) -> list[str]:
    c = settings.overload_concurrency
    # -t bounds the run whatever the mode manages; -n after it keeps ab from stopping at 50000.
    return ab_command(
        url=target.url(delay=settings.delay),
        requests=3 * c,
        concurrency=c,
        timeout_s=30,
        time_limit_s=settings.overload_s,
    )


class Overload(Fault):
    name = "overload"

    def run(self, *, session: FaultSession, run_id: str, raw_dir: Path | None) -> FaultFindings:
        """ab at c=2000 from inside the network, one target at a time."""
        out = [
            self.one(session=session, target=target, run_id=run_id, raw_dir=raw_dir)
            for target in session.targets
        ]
        containers = {s: c for v in out for s, c in (v.aftermath.containers or {}).items()}
        return FaultFindings(
            fault=self.name, stopped_service=None, containers=containers, targets=[*out]
        )

    def one(
        self, *, session: FaultSession, target: Target, run_id: str, raw_dir: Path | None
    ) -> OverloadVerdict:
        s = session.settings
        before_burst = session.burst(target)
        states_before = session.states()
        load = _overload(session=session, target=target, run_id=run_id, raw_dir=raw_dir)
        # A server may still be working through requests whose clients have gone (a queue
        # never forgets): one fresh request shows how long until it answers normally again.
        drain_s, drain_answer = timed_request(
            host="127.0.0.1", port=probe_port(target), delay=s.delay, timeout_s=s.drain_limit_s
        )
        session.mark(f"a fresh request answered {drain_answer} after {drain_s:.1f} s")
        after_burst, stuck, stuck_reason, notes = _settled(
            session=session, target=target, before_burst=before_burst
        )
        containers = container_checks(before=states_before, after=session.states())
        ab, ab_error = _ab_report(load.output, concurrency=s.overload_concurrency)
        probe = phase_stats(load.outcomes, start=load.start, end=load.end)
        problems = unexpected_answers(probe.kinds, allowed={200, 502, 503, 504})
        stuck, stuck_reason = _drained(drain_s, drain_answer, stuck=stuck, reason=stuck_reason)
        if stuck:
            problems.append(stuck_reason)
        notes += _drain_note(drain_s, delay=s.delay)
        problems += check_problems(containers)
        return OverloadVerdict(
            probed=Probed.of(target, clients=s.overload_concurrency, delay=s.delay),
            ab=AbOutcome(
                figures=AbFigures.of(ab) if ab is not None else None,
                exit_code=load.exit_code,
                error=ab_error,
            ),
            probe=probe,
            probe_concurrency=OVERLOAD_PROBE_CONCURRENCY,
            shed=shed_summary(
                ab=ab,
                ab_error=ab_error,
                probe=probe,
                delay=s.delay,
                concurrency=s.overload_concurrency,
            ),
            drain_s=round(drain_s, 3),
            drain_answer=drain_answer,
            aftermath=aftermath(
                load.outcomes,
                bursts=(before_burst, after_burst),
                stuck=(stuck, stuck_reason),
                problems=problems,
                notes=notes,
                containers=containers,
            ),
        )


@dataclass(frozen=True)
class _Overloaded:
    """What ab printed at c=2000, and what the regular clients saw meanwhile."""

    output: str  # ab's stdout, then its stderr
    exit_code: int
    outcomes: list[Outcome]
    start: float
    end: float


def _overload(
    *, session: FaultSession, target: Target, run_id: str, raw_dir: Path | None
) -> _Overloaded:
    """ab at c=2000 in its own container on the scenario's network, with a few regular clients
    probing from the host meanwhile; ab's report kept under raw/."""
    s = session.settings
    network = session.docker.network(session.compose_file)
    argv = overload_command(target=target, settings=s)
    name = f"flask-playground-overload-{run_id}-{target.name}"
    session.commands.append(shown(session.docker.loadgen_argv(network=network, tool_argv=argv)))
    session.docker.remove(name)
    prober = Prober(
        host="127.0.0.1",
        port=probe_port(target),
        concurrency=OVERLOAD_PROBE_CONCURRENCY,
        delay=s.delay,
        timeout_s=s.probe_timeout_s,
        clock=session.now,
    )
    try:
        session.docker.run(
            session.docker.loadgen_argv(network=network, tool_argv=argv, name=name, detach=True)
        )
        start = session.mark(f"ab -c {s.overload_concurrency} against {target.name}")
        with running([prober]):
            exit_code = session.docker.wait_container(name, timeout=s.overload_s + 120)
            end = session.mark(f"ab finished ({target.name})")
            outcomes = prober.stop()
        stdout, stderr = session.docker.container_logs(name)
    finally:
        session.docker.remove(name)
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        (raw_dir / f"overload-{target.name}.txt").write_text(stdout + "\n" + stderr)
    return _Overloaded(
        output=stdout + "\n" + stderr, exit_code=exit_code, outcomes=outcomes, start=start, end=end
    )


def _ab_report(output: str, *, concurrency: int) -> tuple[LoadResult | None, str | None]:
    """ab's report, or why there is none."""
    try:
        return loadmod.TOOLS["ab"].parse(
            stdout=output, per_request=None, concurrency=concurrency
        ), None
    except LoadOutputError as exc:
        return None, str(exc)


def _settled(
    *, session: FaultSession, target: Target, before_burst: Burst
) -> tuple[Burst, bool, str, list[str]]:
    """A burst of regular requests after the overload, against the one before it: stuck or not,
    and why; measured again while a slow first burst may be a backlog draining."""
    after_burst = session.burst(target)
    stuck, stuck_reason = stuck_verdict(before=before_burst, after=after_burst)
    notes = []
    # A thread pool may answer the fresh request from its one free thread while the rest
    # still work through requests of clients that had gone: a slow first burst is that
    # backlog, not lost capacity, if a later one is as quick as before.
    for _ in range(SETTLE_BURSTS):
        if not stuck or not after_burst.ok:
            break
        notes.append(
            f"the first burst after the overload was slow ({stuck_reason}); "
            "measured again once the backlog had drained"
        )
        after_burst = session.burst(target)
        stuck, stuck_reason = stuck_verdict(before=before_burst, after=after_burst)
    return after_burst, stuck, stuck_reason, notes


def shed_summary(
    *,
    ab: LoadResult | None,
    ab_error: str | None,
    probe: PhaseStats,
    delay: float,
    concurrency: int,
) -> list[str]:
    """Where the server shed the load, in words: refused, reset, queued, or answered errors."""
    said = []
    if ab is None:
        said.append(f"ab printed no report: {ab_error}")
    else:
        f = ab.failures
        if f.get("connect"):
            said.append(f"{f['connect']} connections refused or not accepted in time")
        if f.get("receive"):
            said.append(f"{f['receive']} connections reset or closed without an answer")
        if f.get("exceptions"):
            said.append(f"{f['exceptions']} socket exceptions")
        if ab.non_2xx:
            said.append(f"{ab.non_2xx} error answers (non-2xx)")
        if ab.connect_max_ms is not None and syn_retransmitted(ab.connect_max_ms):
            said.append(
                f"listen queue overflowed: a connect took {ab.connect_max_ms / 1000:.1f} s "
                "(SYN retransmits)"
            )
        p50 = ab.latency_ms.get("p50")
        p99 = ab.latency_ms.get("p99")
        if p50 is not None and queued(p50_ms=p50, delay=delay):
            tail = EM_DASH if p99 is None else f"{p99 / 1000:.1f} s"
            said.append(
                f"queueing: median {p50 / 1000:.1f} s, p99 {tail} for a {delay:g} s upstream"
            )
        elif p99 is not None and p99 > TAIL_QUEUED_FACTOR * delay * 1000:
            said.append(f"some requests queued: p99 {p99 / 1000:.1f} s for a {delay:g} s upstream")
        if not said:
            said.append(
                f"nothing shed: all {ab.complete} answered at about the delay "
                f"(median {(p50 or 0) / 1000:.2f} s)"
            )
    kinds = {k: n for k, n in probe.kinds.items() if k != "200"}
    if kinds:
        said.append(f"regular clients meanwhile got {kinds}")
    if probe.p50_s is not None and probe.p50_s > 2 * delay:
        said.append(
            f"regular clients waited {probe.p50_s:.1f} s (median) for a {delay:g} s request"
        )
    return said


def _drained(drain_s: float, answer: str, *, stuck: bool, reason: str) -> tuple[bool, str]:
    """Stuck when a fresh request after the overload did not answer 200."""
    if answer != "200":
        return True, f"a fresh request after the overload got {answer} after {drain_s:.1f} s"
    return stuck, reason


def _drain_note(drain_s: float, *, delay: float) -> list[str]:
    """A note when a fresh request waited for the queued requests of clients that had gone."""
    if drain_s > delay * 3 + 2:
        return [
            f"after the overload a fresh request waited {drain_s:.1f} s: the "
            "server first worked through the queued requests of clients that "
            "had gone"
        ]
    return []


#: The fault this module runs, found by its word (:func:`playground.faults.registry.runner`).
RUNNERS: tuple[Fault, ...] = (Overload(),)

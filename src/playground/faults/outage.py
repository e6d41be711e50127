"""``upstream-outage`` and ``db-outage``: stop a service under load, start it again, watch.

``docker compose stop slow_api`` (or ``postgres`` in the bonus scenario) while the prober runs,
then ``start`` it again: the app must answer 502/504 (503 for the database) promptly, within
its upstream timeout, never hang a worker, and serve normally again within seconds of the
service's return, without a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from playground.core.target import Target
from playground.faults.analysis import (
    count_kinds,
    longest_overlapping,
    phase_stats,
    started_after,
    time_to_recover,
    unexpected_answers,
)
from playground.faults.captured import judged
from playground.faults.fault import Fault, Observed, Phases
from playground.faults.faultsession import FaultSession, sleep_until
from playground.faults.probe import Prober
from playground.faults.results import OutageVerdict, Probed

# The apps' upstream timeout is the delay plus this grace (UPSTREAM_GRACE_S in
# common/querydelay.py, which a unit test keeps equal to this).
UPSTREAM_GRACE_S = 5.0


class Outage(Fault):
    stopped_service: ClassVar[str]

    def describe(self, session: FaultSession) -> None:
        s, service = session.settings, self.stopped_service
        session.record("stop", service)
        session.commands += [
            f"curl -s -o /dev/null -w '%{{http_code}} %{{time_total}} s\\n' "
            f"'{t.host_url(delay=s.delay)}'   # while it is down"
            for t in session.targets
        ]
        session.record("start", service)

    def phases(self, session: FaultSession, probers: Sequence[Prober]) -> Phases:
        """Stop the service under load, start it again."""
        s, service = session.settings, self.stopped_service
        start = session.mark("probe started")
        sleep_until(session, start + s.baseline_s)
        stop_at = session.mark(f"stop {service}")
        session.docker.stop_service(session.compose_file, service)
        down_at = session.mark(f"{service} stopped")
        sleep_until(session, down_at + s.fault_s)
        session.mark(f"start {service}")
        session.docker.start_service(session.compose_file, service)
        back_at = session.mark(f"{service} started")
        sleep_until(session, back_at + s.recovery_s)
        end = session.mark("probe stopping")
        return Phases(start=start, fault_at=stop_at, in_effect_at=down_at, back_at=back_at, end=end)

    def judge(self, seen: Observed) -> OutageVerdict:
        """The phases of one target's outcomes and what must hold of them."""
        session, outcomes, marks = seen.session, seen.outcomes, seen.marks
        s, service = session.settings, self.stopped_service
        stop_at, down_at, back_at = marks.fault_at, marks.in_effect_at, marks.back_at
        bound = s.delay + UPSTREAM_GRACE_S
        longest = longest_overlapping(outcomes, start=stop_at, end=back_at)
        recover = time_to_recover(outcomes, back_at=back_at)
        kinds = count_kinds(outcomes)
        # While down: from the moment `stop` returned (until then the service may still finish
        # the requests it had) to the moment `start` returned.
        during = phase_stats(outcomes, start=down_at, end=back_at)
        problems = unexpected_answers(kinds)
        timeouts = kinds.get("timeout", 0)
        if timeouts:
            problems.append(f"{timeouts} requests got no answer within {s.probe_timeout_s:g} s")
        if longest is not None and longest > bound + 1:
            problems.append(
                f"an answer took {longest:.2f} s while {service} was down "
                f"(its upstream timeout is {bound:g} s)"
            )
        after_return = started_after(outcomes, back_at=back_at)
        if after_return == 0:
            problems.append(f"no request started after {service} came back: recovery not measured")
        elif recover is None:
            problems.append(f"still failing {s.recovery_s:g} s after {service} came back")
        notes = []
        if not any(k != "200" for k in during.kinds):
            notes.append(f"no request failed while {service} was down")
        return OutageVerdict(
            probed=Probed.of(seen.target, clients=seen.clients, delay=s.delay),
            requests=len(outcomes),
            kinds=kinds,
            phases={
                "before": phase_stats(outcomes, start=marks.start, end=stop_at),
                "stopping": phase_stats(outcomes, start=stop_at, end=down_at),
                "during": during,
                "after": phase_stats(outcomes, start=back_at, end=marks.end),
            },
            longest_while_down_s=longest,
            answer_bound_s=bound,
            recover_s=recover,
            requests_after_return=after_return,
            aftermath=judged(outcomes, seen.before, seen.after, seen.containers, problems, notes),
        )


class UpstreamOutage(Outage):
    name = "upstream-outage"
    stopped_service = "slow_api"


class DatabaseOutage(Outage):
    name = "db-outage"
    stopped_service = "postgres"

    def applies(self, target: Target) -> bool:
        """Only a scenario with a database can lose it."""
        return target.database


#: The faults this module runs, found by their word (:func:`playground.faults.registry.runner`).
RUNNERS: tuple[Fault, ...] = (UpstreamOutage(), DatabaseOutage())

"""``upstream-slowdown``: the requested delay goes from 1 s to 5 s and back, under load.

Does latency simply follow the upstream, or do requests queue behind busy workers? And once
the upstream is quick again, how long until latency is back to what it was?
"""

from __future__ import annotations

from collections.abc import Sequence

from playground.faults.analysis import (
    count_kinds,
    phase_stats,
    settle_time,
)
from playground.faults.captured import judged
from playground.faults.fault import Fault, Observed, Phases
from playground.faults.faultsession import FaultSession, sleep_until
from playground.faults.probe import Prober
from playground.faults.results import Probed, SlowdownVerdict


class UpstreamSlowdown(Fault):
    name = "upstream-slowdown"

    def describe(self, session: FaultSession) -> None:
        s = session.settings
        session.commands.append(
            f"# after {s.baseline_s:g} s, the same load at "
            f"?delay={s.slow_delay:g} for {s.fault_s:g} s, then at "
            f"?delay={s.delay:g} again"
        )

    def phases(self, session: FaultSession, probers: Sequence[Prober]) -> Phases:
        """Raise the requested delay mid-run (1 s -> 5 s) and lower it again."""
        s = session.settings
        start = session.mark(f"probe started at delay={s.delay:g}")
        sleep_until(session, start + s.baseline_s)
        slow_at = session.mark(f"delay {s.delay:g} -> {s.slow_delay:g}")
        for p in probers:
            p.delay = s.slow_delay
        sleep_until(session, slow_at + s.fault_s)
        back_at = session.mark(f"delay {s.slow_delay:g} -> {s.delay:g}")
        for p in probers:
            p.delay = s.delay
        sleep_until(session, back_at + s.recovery_s)
        end = session.mark("probe stopping")
        return Phases(start=start, fault_at=slow_at, in_effect_at=slow_at, back_at=back_at, end=end)

    def judge(self, seen: Observed) -> SlowdownVerdict:
        """Latency before, while slow and after; queueing; the time to settle back."""
        session, outcomes, marks = seen.session, seen.outcomes, seen.marks
        s = session.settings
        slow_at, back_at = marks.fault_at, marks.back_at
        phase_before = phase_stats(outcomes, start=marks.start, end=slow_at)
        slow = phase_stats(outcomes, start=slow_at, end=back_at)
        phase_after = phase_stats(outcomes, start=back_at, end=marks.end)
        limit = max((phase_before.p90_s or s.delay) * 1.5, s.delay + 0.5)
        settle = settle_time(outcomes, since=back_at, limit_s=limit)
        kinds = count_kinds(outcomes)
        problems = [f"{n} x {k}" for k, n in kinds.items() if k != "200"]
        if settle is None:
            problems.append(
                f"latency not back under {limit:.2f} s {s.recovery_s:g} s after "
                "the upstream sped up again"
            )
        notes = []
        if slow.excess_p50_s is not None and slow.excess_p50_s > 0.5:
            notes.append(
                f"requests queued while the upstream was slow: the median waited "
                f"{slow.excess_p50_s:.2f} s beyond its {s.slow_delay:g} s delay"
            )
        elif slow.p50_s is not None:
            notes.append(
                f"latency followed the upstream ({slow.p50_s:.2f} s median at "
                f"{s.slow_delay:g} s delay), no queueing"
            )
        return SlowdownVerdict(
            probed=Probed.of(seen.target, clients=seen.clients, delay=s.delay),
            slow_delay=s.slow_delay,
            requests=len(outcomes),
            kinds=kinds,
            phases={"before": phase_before, "slow": slow, "after": phase_after},
            settle_s=settle,
            settle_limit_s=round(limit, 3),
            aftermath=judged(outcomes, seen.before, seen.after, seen.containers, problems, notes),
        )


#: The fault this module runs, found by its word (:func:`playground.faults.registry.runner`).
RUNNERS: tuple[Fault, ...] = (UpstreamSlowdown(),)

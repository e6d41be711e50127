"""The story's verdicts, decided once when a target is measured and stored with it.

Each rule reads a target's measured figures and says, as a :class:`~playground.core.results.Finding`,
whether they can be trusted (the generator's self-check, the counts adding up) and what they
show (the service held or collapsed during the incident, recovered or not). The report,
`playground compare` and the command's exit status read these findings; none of them decides
anything again.
"""

from __future__ import annotations

from collections.abc import Iterable

from playground.core.notation import DASH, percent
from playground.core.results import Finding
from playground.incident.held import ERROR, INFO, WARNING, incident
from playground.incident.storyresults import StoryRun, StoryTarget, SweepTarget

#: A send is *late* when it left more than this after its intended time: the generator's own
#: p99 bound (loadgen/openloop.py, MAX_SEND_LAG_P99_S; docs/story.md, "How far to trust the
#: figures"), and one clock tick of /proc/stat's steal (a second with any steal lost at least
#: this much of one CPU).
LATE_SEND_S = 0.010


def generator(check_valid: bool, reasons: Iterable[str], *, where: str) -> list[Finding]:
    """The generator's self-check: a run that did not keep its schedule is no headline."""
    if check_valid:
        return []
    why = "; ".join(reasons) or "no reason recorded"
    return [
        Finding(
            code="generator-invalid",
            severity=ERROR,
            message=f"{where}: the load generator did not keep its schedule ({why}); its "
            "latencies and goodput are not trusted",
            figures={"reasons": list(reasons)},
        )
    ]


def steal(target: StoryTarget) -> list[Finding]:
    """The host's steal during the run, and whether the late sends came with it."""
    st = target.steal
    if st is None or (st.late_sends == 0 and st.steal_s == 0):
        return []
    share = percent(st.share, digits=1)
    message = (
        f"the host stole {st.steal_s:.2f} CPU-s during the run ({share} of the machine's CPU "
        f"time); {st.late_sends} sends left more than {LATE_SEND_S * 1000:g} ms late"
    )
    if st.late_sends:
        message += (
            f", {st.late_sends_with_steal} of them in seconds when the host stole at least "
            "as much CPU time as they were late"
        )
    return [
        Finding(
            code="host-steal",
            severity=INFO,
            message=message,
            figures={
                "steal_s": st.steal_s,
                "share": st.share,
                "late_sends": st.late_sends,
                "late_sends_with_steal": st.late_sends_with_steal,
            },
        )
    ]


def retried(target: StoryTarget) -> list[Finding]:
    """A measurement made again because the generator's self-check marked it invalid."""
    tries = target.invalid_tries
    if not tries:
        return []
    lags = ", ".join(
        DASH
        if t.check is None or t.check.send_lag_p99_s is None
        else f"{t.check.send_lag_p99_s * 1000:.1f} ms"
        for t in tries
    )
    with_steal = sum(t.steal.late_sends_with_steal for t in tries if t.steal)
    late = sum(t.steal.late_sends for t in tries if t.steal)
    return [
        Finding(
            code="measured-again",
            severity=INFO,
            message=f"measured {len(tries) + 1} times: the {len(tries)} before this one were "
            f"invalid by the generator's self-check (send lag p99 {lags}; {late} late sends, "
            f"{with_steal} of them as late as the host's steal then), kept in raw/",
            figures={
                "invalid_tries": len(tries),
                "late_sends": late,
                "late_sends_with_steal": with_steal,
            },
        )
    ]


def adds_up(problems: list[str], *, where: str) -> list[Finding]:
    if not problems:
        return []
    return [
        Finding(
            code="counts-do-not-add-up",
            severity=ERROR,
            message=f"{where}: the counts do NOT add up: " + "; ".join(problems),
            figures={"problems": problems},
        )
    ]


def for_target(target: StoryTarget) -> list[Finding]:
    """Every finding of one target through the incident (and its closed loop)."""
    out: list[Finding] = []
    if target.check is not None:
        out += generator(target.check.valid, target.check.reasons, where="open loop")
    out += retried(target)
    out += steal(target)
    out += adds_up(target.adds_up, where="open loop")
    out += withheld(target, incident(target))
    if target.closed_loop is not None:
        out += adds_up(target.closed_loop.adds_up, where="closed loop (ab)")
    return out


#: The verdicts a lost node takes away from a repeat (playground.incident.held).
VERDICTS = ("held", "collapsed", "recovered", "not-recovered")


def withheld(target: StoryTarget, verdicts: list[Finding]) -> list[Finding]:
    """A repeat on Swarm that lost a node with a task of the stack on it has no verdict: what
    the incident did cannot be told from what the lost node did. Its figures stand."""
    lost = target.swarm.lost if target.swarm is not None else None
    if lost is None or not lost.affected:
        return verdicts
    when = "" if lost.at_s is None else f" at {lost.at_s:g} s"
    gone = "drained" if lost.how == "drain" else "stopped (its engine)"
    return [
        *(f for f in verdicts if f.code not in VERDICTS),
        Finding(
            code="withheld",
            severity=WARNING,
            message=f"verdict withheld: {lost.node} {gone}{when}, with "
            f"{', '.join(lost.on_it)} on it; the figures stand as measured",
            figures={"node": lost.node, "how": lost.how, "at_s": lost.at_s},
        ),
    ]


def for_sweep_target(target: SweepTarget) -> list[Finding]:
    out: list[Finding] = []
    for step in target.steps:
        where = f"{step.rate:g} visits/s"
        if step.check is not None:
            out += generator(step.check.valid, step.check.reasons, where=where)
        out += adds_up(step.adds_up, where=where)
    return out


def failed(run: StoryRun) -> list[str]:
    """The targets whose measurement failed or cannot be trusted (an error, or a finding of
    severity error): the command exits 1 when there is any."""
    bad = [
        t.name
        for t in run.targets
        if t.error or t.closed_loop_error or any(f.severity == ERROR for f in t.findings)
    ]
    bad += [f"{c.target} (cross-check at {c.rate:g}/s)" for c in run.crosschecks if c.error]
    if run.cliff is not None:
        bad += [f"{c.name} (cliff)" for c in run.cliff.targets if c.error]
    if run.sweep is not None:
        bad += [
            f"{t.name} (sweep)"
            for t in run.sweep.targets
            if t.error or any(f.severity == ERROR for f in t.findings)
        ]
    return bad


def trusted(target: StoryTarget) -> bool:
    """No error finding: its figures can be a headline."""
    return target.error is None and not any(f.severity == ERROR for f in target.findings)

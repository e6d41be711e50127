"""The same setting from run to run: where repeats split, how far whole runs disagree.

Repeats of one run share a machine and an hour; runs of the same setting on other days, or on
another machine of the same kind, collapse at rates further apart than their repeats' counts
explain. docs/predict.md sets every run of gthread 2 x 64 behind nginx between its last
delay that mostly held and its first that mostly collapsed, side by side with what each run
measured before the incident that might set it apart (the app's CPU per request, a thread's
time beyond the third party's, the busiest worker's share, the hypervisor's steal), so the
page's reading of the spread rests on records, not on a copy of them:

    .venv/bin/python -m playground.predict.validation --write   # writes the page's table
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from playground.core import notation
from playground.core.odds import Frequency
from playground.incident import edge
from playground.incident.mechanism import Mechanism
from playground.incident.runrecords import RunRecord

#: The target and the third party's delays in the incident the page compares run by run: gthread
#: behind nginx from the delay where most repeats held to the one where most collapsed.
TARGET = "gunicorn-threads"
DELAYS = (1.6, 1.7, 1.72, 1.74, 1.8)
#: Fewer trusted repeats than this say too little of a run's rate to set beside the others.
MIN_REPEATS = 3


@dataclass(frozen=True)
class RunSpread:
    """One run at one delay: its repeats' collapses and what they measured before the incident."""

    run_id: str
    incident_delay: float
    collapsed: Frequency
    mechanisms: tuple[Mechanism, ...]

    def figure(self, read: Callable[[Mechanism], float | None]) -> list[float]:
        return [v for m in self.mechanisms if (v := read(m)) is not None]


def runs(records: Sequence[RunRecord], *, target: str = TARGET) -> list[RunSpread]:
    """Every run of `target` at each of :data:`DELAYS` with the story's other settings as they
    are by default and at least :data:`MIN_REPEATS` trusted repeats, by delay, then run."""
    found = []
    for delay in DELAYS:
        by_run: dict[str, list[edge.Repeat]] = {}
        for r in edge.repeats(records, target=target, incident_delay=delay):
            by_run.setdefault(r.run_id, []).append(r)
        for run_id, repeats in sorted(by_run.items()):
            if len(repeats) < MIN_REPEATS:
                continue
            found.append(
                RunSpread(
                    run_id=run_id,
                    incident_delay=delay,
                    collapsed=Frequency(sum(r.collapsed for r in repeats), len(repeats)),
                    mechanisms=tuple(m for r in repeats if (m := r.target.mechanism)),
                )
            )
    return found


def table(records: Sequence[RunRecord]) -> list[str]:
    """Each run's row: its delay, collapses k of n, and the medians (ranges) of what its repeats
    measured before the incident."""
    lines = [
        "| run | third party in the incident | collapsed | app CPU per request before, ms "
        "| a thread's time beyond the third party's before, ms | busiest share before "
        "| the host's steal, most over a repeat |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs(records):
        steal = run.figure(lambda m: m.steal_share)
        lines.append(
            f"| {run.run_id} | {run.incident_delay:g} s | {run.collapsed.text()} "
            f"| {notation.median_range(run.figure(lambda m: m.cpu_ms_per_request_before))} "
            f"| {notation.median_range(run.figure(lambda m: m.hold_beyond_before_ms))} "
            f"| {notation.median_range(run.figure(lambda m: m.busiest_share_begun_before), 3)} "
            f"| {f'{100 * max(steal):.1f} %' if steal else '-'} |"
        )
    return lines

"""How gthread's two workers share a full pool, by what connects to them.

Before the incident the kernel hands one of Gunicorn's two workers more of the new connections
than the other (:mod:`.split`). What decides a collapse is what the busiest worker holds once
the pool is full: behind nginx it holds about the share it began before, so it queues its
surplus beside the other worker's free threads; behind HAProxy it holds near half, whatever it
began before. Both are read from each repeat's candidates (:mod:`.mechanism`): its share of the
requests begun before the incident, and of the connections the workers held in the incident's
first seconds (the sampler's mean per worker).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from playground.core import notation
from playground.incident.runrecords import RunRecord


@dataclass(frozen=True)
class Shares:
    """One repeat's busiest worker: its share begun before, and held at the onset."""

    before: float
    held: float


def shares(record: RunRecord, target: str) -> list[Shares]:
    """Both shares of every trusted repeat of `target` in the run that has them."""
    found = []
    for t in record.targets:
        m = t.mechanism
        if t.name != target or not t.valid or m is None:
            continue
        if m.busiest_share_begun_before is None or m.busiest_share_held_onset is None:
            continue
        found.append(Shares(m.busiest_share_begun_before, m.busiest_share_held_onset))
    return found


def table(found: Sequence[tuple[RunRecord, str]]) -> list[str]:
    """Per run and target: the repeats, the busiest worker's share begun before and held at
    the onset (median and range), and in how many repeats it held less than it began."""
    lines = [
        "| run | target | delay | repeats | busiest worker's share of the requests begun "
        "before | ... of the connections held at the onset | held less than it began |",
        "|---|---|---|---|---|---|---|",
    ]
    for record, target in found:
        got = shares(record, target)
        if not got:
            continue
        less = sum(s.held < s.before for s in got)
        lines.append(
            f"| {record.run_id} | {target} | {record.story_settings().incident_delay:g} s "
            f"| {len(got)} | {notation.median_range([s.before for s in got])} "
            f"| {notation.median_range([s.held for s in got])} | {less} of {len(got)} |"
        )
    return lines

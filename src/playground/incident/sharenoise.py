"""How far the split between gthread's two workers moves from repeat to repeat, beyond counting
and with the host's steal.

Each repeat's busiest share before the incident is a count: of the requests begun in the
seconds before it (the story's rate for `before_s` less :data:`mechanism.BEFORE_FROM_S`), the
ones its busiest worker began. If the kernel gave every new connection to that worker with the
same chance in every repeat, the shares would still differ by counting alone, by a binomial
standard deviation of sqrt(p (1 - p) / n). What moves beyond that is the split itself changing
between repeats, the part a model that already makes the kernel's choice per connection should
draw per repeat; what does not is the model's own per-connection chance counted twice.
docs/predict.md's table ``share-noise`` (written by ``python -m playground.predict.validation
--write``) sets the two side by side for each setting where gthread's repeats are kept, and
``steal-split`` sets every kept repeat's share beside the hypervisor's steal over it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from playground.incident import edge
from playground.incident.mechanism import BEFORE_FROM_S
from playground.incident.runrecords import RunRecord

#: A share this close to an even split is the kernel spreading new connections over both
#: workers, not the usual one worker taking most of them (docs/predict.md).
EVEN_BELOW = 0.6


def counting_sd(p: float, n: int) -> float:
    """The spread counting alone gives a share `p` of `n` connections: sqrt(p (1 - p) / n)."""
    return math.sqrt(p * (1 - p) / n)


@dataclass(frozen=True)
class Spread:
    """The busiest shares before the incident of one setting's trusted repeats."""

    shares: tuple[float, ...]
    counted: int  # requests begun before the incident in each repeat (the rate's count)

    @property
    def usual(self) -> tuple[float, ...]:
        """The repeats where one worker took most of the connections (the usual regime)."""
        return tuple(s for s in self.shares if s >= EVEN_BELOW)

    def sd(self) -> float | None:
        """The standard deviation between the usual repeats' shares."""
        return statistics.stdev(self.usual) if len(self.usual) >= 2 else None

    def counting_sd(self) -> float | None:
        """What counting alone gives at the usual repeats' mean share: sqrt(p (1 - p) / n)."""
        if not self.usual:
            return None
        return counting_sd(statistics.fmean(self.usual), self.counted)

    def beyond(self) -> float | None:
        """The spread left once counting's is taken away (0 where counting covers it all)."""
        sd, counting = self.sd(), self.counting_sd()
        if sd is None or counting is None:
            return None
        return math.sqrt(max(0.0, sd**2 - counting**2))


def spread(found: Sequence[edge.Repeat], records: Sequence[RunRecord]) -> Spread:
    """The setting's shares, and the requests each repeat counted them over."""
    by_id = {r.run_id: r for r in records}
    counts = set()
    for run_id in {r.run_id for r in found}:
        s = by_id[run_id].story_settings()
        counts.add(round(s.rate * (s.before_s - BEFORE_FROM_S)))
    (counted,) = counts  # the edge settings share the story's rate and timeline
    shares = tuple(
        v
        for r in found
        if r.target.mechanism and (v := r.target.mechanism.busiest_share_begun_before) is not None
    )
    return Spread(shares=shares, counted=counted)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(records: Sequence[RunRecord]) -> list[str]:
    """Per gthread edge setting: its repeats' shares, the usual ones' spread beside counting's."""
    lines = [
        "| setting | repeats | share before, range | under "
        f"{EVEN_BELOW:g} | sd, the rest | sd from counting | beyond counting |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in edge.EDGE_SETTINGS:
        if s.target != "gunicorn-threads":
            continue
        found = s.repeats(records)
        sp = spread(found, records)
        if not sp.shares:
            continue
        lines.append(
            f"| {s.label} | {len(sp.shares)} | {min(sp.shares):.3f}-{max(sp.shares):.3f} "
            f"| {len(sp.shares) - len(sp.usual)} | {_f(sp.sd())} | {_f(sp.counting_sd())} "
            f"| {_f(sp.beyond())} |"
        )
    return lines


#: The host's steal over a repeat, in bands: quiet, a little, some, a tenth of the cores or more.
STEAL_BANDS = ((0.0, 0.005), (0.005, 0.05), (0.05, 0.1), (0.1, 1.0))


def steal_table(records: Sequence[RunRecord]) -> list[str]:
    """Every trusted repeat of gthread behind nginx kept with its candidates, whatever its
    settings, by the host's steal over it: the busiest share before the incident."""
    seen = [
        (m.steal_share, m.busiest_share_begun_before, r.run_id)
        for r in records
        for t in r.targets
        if t.name == "gunicorn-threads" and t.valid and (m := t.mechanism) is not None
        if m.steal_share is not None and m.busiest_share_begun_before is not None
    ]
    lines = [
        "| the host's steal over the repeat | repeats | busiest share before: median "
        f"(range) | under {EVEN_BELOW:g} | runs |",
        "|---|---|---|---|---|",
    ]
    for lo, hi in STEAL_BANDS:
        band = [(share, run) for steal, share, run in seen if lo <= steal < hi]
        if not band:
            continue
        shares = [share for share, _ in band]
        lines.append(
            f"| {100 * lo:g}-{100 * hi:g} % | {len(band)} "
            f"| {statistics.median(shares):.3f} ({min(shares):.3f}-{max(shares):.3f}) "
            f"| {sum(s < EVEN_BELOW for s in shares)} "
            f"| {', '.join(sorted({run for _, run in band}))} |"
        )
    return lines

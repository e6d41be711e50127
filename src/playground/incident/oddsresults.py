"""A prediction as odds: the model's draws for one target (:class:`Odds`) and the map of where a
pool collapses over arrival rate and the incident's delay (:class:`OddsMap`), as the predicted
story run stores them (`playground predict`, docs/predict.md).

Each draw is one simulated repeat: the arrivals as the run's seed gives them, the system's seed
and the busiest Gunicorn worker's share its own. The frequencies are counted here, with
Wilson's interval (:mod:`playground.core.odds`), and nowhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from playground.core.jsonmodel import doc
from playground.core.odds import Frequency

#: The verdict in three words (playground.incident.held.outcome gives them), here in the lowest
#: of the story's results so that every module that counts them can.
HELD, COLLAPSED, NOT_RECOVERED = "held", "collapsed", "collapsed and did not recover"

#: The recovery-time quantiles the prediction gives.
QUANTILES = (0.5, 0.9)


@dataclass(frozen=True)
class Draw:
    """One simulated repeat of the incident."""

    system_seed: int = doc("the seed of what the model drew inside the servers", 0)
    share: float | None = doc(
        "the busiest Gunicorn worker's share of new connections in this draw; null: a target "
        "it does not apply to"
    )
    visits_served_during: float | None = doc("share of the visits during the incident served")
    recovery_s: float | None = doc(
        "seconds to recover after the incident; null: not within the run"
    )
    outcome: str = doc(
        "`held`, `collapsed` (and recovered within the run) or `collapsed and did not recover` "
        "(playground.incident.held.outcome)",
        "",
    )


@dataclass
class Odds:
    """A target's draws: how often it held, recovered, or did not."""

    share_pinned: bool = doc(
        "true: every draw at the share `--busiest-share` set; false: each draw's share drawn "
        "from the measured ones (playground.predict.measured)",
        False,
    )
    draws: list[Draw] = doc("one per simulated repeat", factory=list)
    representative: int = doc(
        "which draw (0-based) the target's per-second rows and summary are: the most frequent "
        "verdict's draw with the median visits served",
        0,
    )
    threshold_share: float | None = doc(
        "a gthread pool's: the busiest share that splits its draws into mostly held below it "
        "and mostly not above it (playground.predict.draws.share_threshold); null: not a "
        "gthread pool, a pinned share, or no share splits them"
    )
    measured_shares: list[float] = doc(
        "the measured shares the draws came from (playground.predict.measured)", factory=list
    )
    shares_run: str | None = doc(
        "the run those shares were measured in (`playground predict --shares-from`); absent: "
        "the model's fit run",
        omit_none=True,
    )

    @property
    def drawn_by(self) -> str:
        """How the draws differ: `pinned` (one share for all), `shares` (each a measured
        share), or `seeds` (each its own system seed)."""
        if self.share_pinned:
            return "pinned"
        return "shares" if any(d.share is not None for d in self.draws) else "seeds"

    def frequency(self, outcome: str) -> Frequency:
        """How many draws came out `outcome` (one of held.outcome's words)."""
        return Frequency(sum(d.outcome == outcome for d in self.draws), len(self.draws))

    def recovery_quantile(self, q: float) -> float | None:
        """The q-quantile of the time to recover over every draw (held ones included), a draw
        that did not recover within the run counted as later than any; None: that quantile
        falls among those (censored: past the run's end)."""
        times = sorted(math.inf if d.recovery_s is None else d.recovery_s for d in self.draws)
        if not times:
            return None
        value = times[min(len(times) - 1, max(0, math.ceil(q * len(times)) - 1))]
        return None if math.isinf(value) else value


@dataclass(frozen=True)
class MapCell:
    """One arrival rate and incident delay: how many draws collapsed."""

    rate: float = doc("visits per second", 0.0)
    delay: float = doc("the third party's delay during the incident, s", 0.0)
    collapsed: int = doc("draws that collapsed (served under 95% of the visits during it)", 0)
    draws: int = doc("draws in the cell", 0)
    simulated: bool = doc(
        "false: not simulated, filled from a neighbour by monotonicity (a cell at a lower rate "
        "and delay that collapsed in every draw, or one at a higher rate and delay that never "
        "did)",
        True,
    )

    @property
    def p(self) -> float:
        return self.collapsed / self.draws if self.draws else math.nan


@dataclass(frozen=True)
class MapPoint:
    """Measured runs at one rate and delay, with the same settings otherwise."""

    rate: float = doc("visits per second", 0.0)
    delay: float = doc("the incident's delay, s", 0.0)
    collapsed: int = doc("measurements that collapsed", 0)
    runs: int = doc("measurements", 0)
    run_ids: list[str] = doc("the story runs they come from", factory=list)


@dataclass
class OddsMap:
    """`playground predict TARGET --map`: P(collapse) over arrival rate x incident delay."""

    target: str = doc("the target mapped", "")
    pool: int = doc("its workers x threads: Little's law's capacity is pool / delay", 0)
    incident_s: float = doc("seconds the incident lasts in every cell", 0.0)
    rates: list[float] = doc("the grid's arrival rates, visits/s", factory=list)
    delays: list[float] = doc("the grid's incident delays, s", factory=list)
    draws_per_cell: int = doc("draws in each simulated cell", 0)
    after_s: float = doc(
        "seconds simulated after the incident: enough for every visit that began during it "
        "to end, so the collapse verdict is the full run's",
        0.0,
    )
    cells: list[MapCell] = doc("one per rate and delay, rates fastest", factory=list)
    measured: list[MapPoint] = doc(
        "stored story runs of the target whose settings match apart from rate and delay",
        factory=list,
    )


def share_range(shares: list[float]) -> str:
    return f"{min(shares):.2f}-{max(shares):.2f}" if shares else "none"


def held_split(draws: list[Draw], share: float) -> tuple[Frequency, Frequency] | None:
    """How often the draws held below `share` and at or above it (those with a share); None:
    a side has no draw."""
    below = [d.outcome == HELD for d in draws if d.share is not None and d.share < share]
    above = [d.outcome == HELD for d in draws if d.share is not None and d.share >= share]
    if not below or not above:
        return None
    return Frequency(sum(below), len(below)), Frequency(sum(above), len(above))


def threshold_text(odds: Odds) -> str | None:
    """What a gthread pool's answer turns on, in one sentence of parts split by "; "; None: the
    share was pinned or does not apply."""
    drawn = [d.share for d in odds.draws if d.share is not None]
    if odds.share_pinned or not drawn:
        return None
    measured = f"the measured shares were {share_range(odds.measured_shares)}"
    split = None if odds.threshold_share is None else held_split(odds.draws, odds.threshold_share)
    if split is None:
        return f"no busiest share drawn ({share_range(drawn)}) splits held from not; {measured}"
    below, above = split
    return (
        f"holds while the busiest worker's share stays below {odds.threshold_share:.2f}; "
        f"draws below it held {below.text()}, above it {above.text()}; {measured}"
    )


def recovery_text(odds: Odds) -> str:
    """The recovery-time quantiles over every draw, a censored one said as such."""
    parts = []
    for q in QUANTILES:
        value = odds.recovery_quantile(q)
        name = "median" if q == 0.5 else f"{100 * q:.0f}th percentile"
        parts.append(f"{name} {'past the run' if value is None else f'{value:.0f} s'}")
    return "time to recover: " + ", ".join(parts)

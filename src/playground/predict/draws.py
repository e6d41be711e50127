"""A prediction as odds: one target through the incident N times, each a simulated repeat.

Measured repeats send the same schedule (the generator's seed) and differ inside the servers,
above all in how the kernel splits connections between Gunicorn's workers. So every draw keeps
the arrivals of the run's `seed` and takes a system seed of its own (`system_seed` + the draw's
index) and, for a gthread pool, a busiest-worker share of its own, drawn from the measured ones
(:mod:`.measured`) unless `--busiest-share` pins it. Out comes the target as one
representative draw (its per-second rows and summary) with every draw's outcome
(:class:`playground.incident.oddsresults.Odds`), and for a gthread pool the share at which P(held) crosses
1/2, by bisection on the pinned share.

A draw that only needs the collapse verdict (the bisection, the map) stops simulating new
arrivals once every visit that began during the incident has ended (:func:`collapse_settings`):
nothing later can reach those visits, so the verdict is the full run's.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import replace
from functools import partial

from playground.core.target import Target
from playground.incident import analysis, held
from playground.incident.oddsresults import Draw, Odds
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryTarget
from playground.predict import measured
from playground.predict.run import arrivals, each, predict_target, simulate
from playground.predict.system import system_for

#: The bisection's draws per share (or the prediction's, where fewer) and its steps (the share
#: to within 1/2^6 of its range).
THRESHOLD_DRAWS = 12
THRESHOLD_STEPS = 6


def draw_settings(target: Target, settings: StorySettings, index: int) -> StorySettings:
    """Draw `index`'s settings: its own system seed and, where the share applies and is not
    pinned, its own busiest share."""
    first = settings.seed if settings.system_seed is None else settings.system_seed
    seed = first + index
    share = settings.busiest_share
    system = system_for(target, settings)
    if share is None and system.busiest_share is not None:
        share = measured.draw_share(random.Random(f"share:{seed}"), workers=system.workers)
    return replace(settings, system_seed=seed, busiest_share=share)


def one_draw(target: Target, settings: StorySettings, index: int) -> tuple[Draw, StoryTarget]:
    s = draw_settings(target, settings, index)
    entry = predict_target(target, s)
    summary = entry.summary
    assert summary is not None
    served, recovery = summary.visits_served_during, summary.recovery_s
    applies = system_for(target, s).busiest_share is not None
    draw = Draw(
        system_seed=s.system_seed or 0,
        share=s.busiest_share if applies else None,
        visits_served_during=served,
        recovery_s=recovery,
        outcome=held.outcome(served, recovery),
    )
    return draw, entry


def _representative(draws: list[Draw]) -> int:
    """The most frequent verdict's draw with the median visits served."""
    common = statistics.mode(d.outcome for d in draws)
    picked = sorted(
        (d.visits_served_during or 0.0, i) for i, d in enumerate(draws) if d.outcome == common
    )
    return picked[(len(picked) - 1) // 2][1]


def predict_odds(
    target: Target,
    settings: StorySettings,
    *,
    draws: int,
    threshold: bool = True,
    jobs: int | None = None,
) -> StoryTarget:
    """`draws` simulated repeats of the target: the representative one, with every outcome
    (`jobs`: processes, :func:`.run.each`'s)."""
    pairs = each(partial(one_draw, target, settings), range(draws), jobs=jobs)
    outcomes = [d for d, _ in pairs]
    rep = _representative(outcomes)
    entry = pairs[rep][1]
    odds = Odds(
        share_pinned=settings.busiest_share is not None,
        draws=outcomes,
        representative=rep,
        measured_shares=measured.shares(),
    )
    system = system_for(target, settings)
    if threshold and system.busiest_share is not None:
        n = min(THRESHOLD_DRAWS, draws)
        odds.threshold_share, odds.threshold_below = threshold_share(
            target, settings, workers=system.workers, draws=n, jobs=jobs
        )
        odds.threshold_draws = n
    entry.odds = odds
    return entry


def visit_bound(settings: StorySettings) -> float:
    """The longest a visit can last: every attempt up to the user's timeout, and the reload
    waits between them at their longest (the generator's jitter at most x 1.5)."""
    jitter = 1.0 if settings.refresh_backoff == 1 else 1.5
    waits = sum(
        settings.refresh_delay * settings.refresh_backoff**n * jitter
        for n in range(settings.max_attempts - 1)
    )
    return settings.max_attempts * settings.timeout + waits


def collapse_settings(settings: StorySettings) -> StorySettings:
    """The run cut short after the incident: every visit begun during it ends within it."""
    return replace(settings, after_s=min(settings.after_s, visit_bound(settings)))


class Decided:
    """The collapse verdict as the visits begun during the incident end: decided (and the run
    stopped) once the share served can no longer cross 95% whatever the visits still under
    way do, so a draw's verdict is the whole run's, sooner."""

    def __init__(self, arrivals: list[float], start: float, end: float) -> None:
        self.during = {k for k, t in enumerate(arrivals) if start <= t < end}
        self.served = self.failed = 0
        self.collapsed: bool | None = None

    def ended(self, visit: int, served: bool) -> bool:
        """`Simulation`'s `ended`: True once the verdict is decided."""
        if visit not in self.during:
            return False
        self.served += served
        self.failed += not served
        n = len(self.during)
        if held.outcome((n - self.failed) / n, 0.0) != held.HELD:
            self.collapsed = True  # even if every visit still under way is served
        elif held.outcome(self.served / n, 0.0) == held.HELD:
            self.collapsed = False  # even if none of them is
        return self.collapsed is not None


def collapsed(target: Target, settings: StorySettings, index: int) -> bool:
    """Draw `index` collapsed: under 95% of the visits that began during the incident were
    served (held.outcome's rule)."""
    s = collapse_settings(draw_settings(target, settings, index))
    start, end = s.before_s, s.before_s + s.incident_s
    decided = Decided(arrivals(s), start, end)
    records = simulate(target, s, ended=decided.ended)
    if decided.collapsed is not None:
        return decided.collapsed
    during = [v for v in analysis.visits_from(records.attempts) if start <= v.start < end]
    served = sum(v.succeeded for v in during) / len(during) if during else None
    return held.outcome(served, 0.0) != held.HELD


def p_held(
    target: Target, settings: StorySettings, *, share: float, draws: int, jobs: int | None = None
) -> float:
    pinned = replace(settings, busiest_share=share)
    return 1 - sum(each(partial(collapsed, target, pinned), range(draws), jobs=jobs)) / draws


def threshold_share(
    target: Target, settings: StorySettings, *, workers: int, draws: int, jobs: int | None = None
) -> tuple[float | None, bool | None]:
    """The busiest share at which P(held) crosses 1/2, by bisection between an even split and
    one worker taking all; (None, True): below 1/2 even at an even split; (None, False): at
    or above 1/2 up to one worker taking all."""
    lo, hi = 1.0 / workers, 1.0

    def holds(share: float) -> bool:
        return p_held(target, settings, share=share, draws=draws, jobs=jobs) >= 0.5

    if not holds(lo):
        return None, True
    for _ in range(THRESHOLD_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    if hi == 1.0:
        return None, False
    return round((lo + hi) / 2, 3), None

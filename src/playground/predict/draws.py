"""A prediction as odds: one target through the incident N times, each a simulated repeat.

Measured repeats send the same schedule (the generator's seed) and differ inside the servers,
above all in how the kernel splits connections between Gunicorn's workers. So every draw keeps
the arrivals of the run's `seed` and takes a system seed of its own (`system_seed` + the draw's
index) and, for a gthread pool, a busiest-worker share of its own, drawn from the measured ones
(:mod:`.measured`) unless `--busiest-share` pins it. A draw keeps its verdict's figures alone
(:func:`playground.incident.analysis.verdict_figures`); the representative draw is run again
in full for its per-second rows and summary (the same seeds give the same run). Out comes the
target as that draw with every draw's outcome
(:class:`playground.incident.oddsresults.Odds`), and for a gthread pool the share the answer
turns on, read from the draws' own shares (:func:`share_threshold`).

A draw that only needs the collapse verdict (the map) stops simulating new arrivals once every
visit that began during the incident has ended (:func:`collapse_settings`): nothing later can
reach those visits, so the verdict is the full run's.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import replace
from functools import partial
from itertools import pairwise

from playground.core.target import Target
from playground.incident import analysis, held
from playground.incident.oddsresults import Draw, Odds, held_split
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryTarget
from playground.incident.targetresults import Incident
from playground.predict import measured
from playground.predict.run import arrivals, each, predict_target, simulate
from playground.predict.system import system_for


def draw_settings(target: Target, settings: StorySettings, index: int) -> StorySettings:
    """Draw `index`'s settings: its own system seed and, where the share applies and is not
    pinned, its own busiest share."""
    first = settings.seed if settings.system_seed is None else settings.system_seed
    seed = first + index
    share = settings.busiest_share
    system = system_for(target, settings)
    if share is None and system.busiest_share is not None:
        share = measured.draw_share(
            random.Random(f"share:{seed}"),
            workers=system.workers,
            front=system.front,
            splits=settings.shares_from,
        )
    return replace(settings, system_seed=seed, busiest_share=share)


def one_draw(target: Target, settings: StorySettings, index: int) -> Draw:
    """Draw `index`: the run simulated without the servers' samples, and its verdict."""
    s = draw_settings(target, settings, index)
    records = simulate(target, s, sampled=False)
    served, recovery = analysis.verdict_figures(
        records.attempts,
        incident=Incident(start=s.before_s, seconds=s.incident_s),
        arrivals_end=s.duration,
        seconds=int(s.duration) + 1,
    )
    return Draw(
        system_seed=s.system_seed or 0,
        share=s.busiest_share if system_for(target, s).busiest_share is not None else None,
        visits_served_during=served,
        recovery_s=recovery,
        outcome=held.outcome(served, recovery),
    )


def _representative(draws: list[Draw]) -> int:
    """The most frequent verdict's draw with the median visits served."""
    common = statistics.mode(d.outcome for d in draws)
    picked = sorted(
        (d.visits_served_during or 0.0, i) for i, d in enumerate(draws) if d.outcome == common
    )
    return picked[(len(picked) - 1) // 2][1]


def share_threshold(draws: list[Draw]) -> float | None:
    """The busiest share the answer turns on, read from the draws' own shares: the cut between
    two drawn shares that misclassifies the fewest draws as "held below it, not at or above
    it", among the cuts where the draws below held in at least half and those above in under
    half, with the two sides' 95 % intervals apart (so that chance alone does not make one);
    several equally good: the middle one. None: no cut qualifies (the answer does not turn on
    the share within those drawn), or the draws have no share."""
    shares = sorted({d.share for d in draws if d.share is not None})
    candidates: list[tuple[int, float]] = []  # (draws misclassified, cut)
    for low, high in pairwise(shares):
        cut = (low + high) / 2
        split = held_split(draws, cut)
        assert split is not None  # a drawn share lies on each side
        below, above = split
        if below.share < 0.5 or above.share >= 0.5 or below.interval[0] <= above.interval[1]:
            continue
        candidates.append(((below.n - below.k) + above.k, cut))
    if not candidates:
        return None
    fewest = min(wrong for wrong, _ in candidates)
    tied = [cut for wrong, cut in candidates if wrong == fewest]
    return round(tied[(len(tied) - 1) // 2], 3)


def predict_odds(
    target: Target,
    settings: StorySettings,
    *,
    draws: int,
    jobs: int | None = None,
) -> StoryTarget:
    """`draws` simulated repeats of the target: the representative one, with every outcome
    (`jobs`: processes, :func:`.run.each`'s)."""
    outcomes = each(partial(one_draw, target, settings), range(draws), jobs=jobs)
    rep = _representative(outcomes)
    entry = predict_target(target, draw_settings(target, settings, rep))
    front = system_for(target, settings).front
    split = measured.own_split(front, settings.shares_from)
    entry.odds = Odds(
        share_pinned=settings.busiest_share is not None,
        draws=outcomes,
        representative=rep,
        threshold_share=None if settings.busiest_share is not None else share_threshold(outcomes),
        measured_shares=measured.shares(front, settings.shares_from),
        shares_run=None if split is None else split.run,
    )
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
    records = simulate(target, s, ended=decided.ended, sampled=False)
    if decided.collapsed is not None:
        return decided.collapsed
    during = [v for v in analysis.visits_from(records.attempts) if start <= v.start < end]
    served = sum(v.succeeded for v in during) / len(during) if during else None
    return held.outcome(served, 0.0) != held.HELD

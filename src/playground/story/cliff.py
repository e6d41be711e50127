"""How close a thread pool is to its cliff: Little's law's prediction, then the edge found.

Per thread-pool target: the prediction (:mod:`.capacity`: capacity at the sweep's delay, and
the upstream time at which the story's rate fills the pool), then two measurements.

1. A fine sweep of offered load from 80% to 120% of the predicted capacity, in steps of 5%,
   the third party at a fixed delay: the edge is the lowest rate whose goodput fell below
   :data:`~playground.incident.held.HELD_SHARE` of what was offered.
2. The incident itself at the story's rate, its delay stepped (1.8 to 2.8 s by default): the
   shortest delay at which the pool collapsed, and the shortest it did not recover from
   within the run.

Prediction and measurement are stored side by side, and a finding says by how much the
prediction missed; the report shows them side by side too (the tables and the chart below).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from playground.core.notation import DASH, num, percent
from playground.core.results import Finding
from playground.incident import held
from playground.incident.settings import SweepSettings
from playground.incident.storyresults import (
    Cliff,
    CliffTarget,
    DelayStep,
    StoryRun,
    StoryTarget,
    Sweep,
    SweepStep,
)
from playground.report.document import Block, Heading, Image, Paragraph, Table
from playground.story import findings, predicted
from playground.story.cells import error
from playground.story.sweep import model_note

SHARES = tuple(round(0.80 + 0.05 * k, 2) for k in range(9))  # 80% ... 120%, 5% apart
#: Where even the lowest share fell (a pool far below its prediction: Gunicorn's gthread over
#: two processes), the sweep goes on at these shares, on a bring-up of its own, to find one
#: that holds.
BELOW = (0.7, 0.6, 0.5, 0.4)
DELAYS = (1.8, 2.0, 2.2, 2.4, 2.6, 2.8)
#: A prediction within this share of the edge found is on target (the issue's 10%).
NEAR = 0.10


def edge(steps: Sequence[SweepStep]) -> tuple[float | None, float | None]:
    """(the lowest offered rate whose goodput fell below HELD_SHARE of it, the highest rate
    below that which held); a step the generator could not keep is not read."""
    trusted = sorted((s for s in steps if s.valid), key=lambda s: s.rate)
    last_held = None
    for s in trusted:
        if held.step_outcome(s) == held.FELL:
            return s.rate, last_held
        last_held = s.rate
    return None, last_held


def below_range(steps: Sequence[SweepStep]) -> bool:
    """The lowest trusted step already fell: the edge is below the rates swept."""
    fell, last_held = edge(steps)
    return fell is not None and last_held is None


def delay_step(delay: float, t: StoryTarget, predicted_lasts_s: float | None) -> DelayStep:
    """One delay's row of the cliff: the measured run's figures beside the model's."""
    s = t.summary
    return DelayStep(
        incident_delay=delay,
        held=held.was_held(t),
        recovered=None if s is None else s.recovery_s is not None,
        recovery_s=None if s is None else s.recovery_s,
        visits_served_during=None if s is None else s.visits_served_during,
        goodput_during=None if s is None else s.goodput_during,
        predicted_lasts_s=predicted_lasts_s,
        lasted_s=held.lasted(t),
        trusted=findings.trusted(t),
        error=t.error,
    )


def first_delay(steps: Sequence[DelayStep], *, failed: str) -> float | None:
    """The shortest trusted delay at which `failed` ("held" or "recovered") was False."""
    return min(
        (d.incident_delay for d in steps if d.trusted and getattr(d, failed) is False),
        default=None,
    )


def _missed(name: str, predicted: float, measured: float | None, what: str) -> list[Finding]:
    if measured is None:
        return [
            Finding(
                code=f"{name}-not-found",
                severity=held.WARNING,
                message=f"no {what} was found in the range measured: the prediction "
                f"({predicted:.2f}) cannot be checked against it",
                figures={"predicted": predicted},
            )
        ]
    off = (predicted - measured) / measured
    return [
        Finding(
            code=f"{name}-{'near' if abs(off) <= NEAR else 'missed'}",
            severity=held.INFO if abs(off) <= NEAR else held.WARNING,
            message=f"{what}: predicted {predicted:.2f}, measured {measured:.2f} "
            f"({100 * off:+.0f}%)",
            figures={"predicted": predicted, "measured": measured, "off": off},
        )
    ]


def judge(c: CliffTarget) -> CliffTarget:
    """The cliff's findings: each prediction against the edge found."""
    p = c.prediction
    if p is None:
        return c
    out = _missed("capacity", p.capacity_per_s, c.edge_rate, "capacity (visits/s)")
    out += _missed("tipping-delay", p.tipping_delay_s, c.edge_delay, "tipping delay (s)")
    return replace(c, findings=out)


# --- in the report ---------------------------------------------------------------------------
CLIFF_CHART = "story-cliff.png"
CLIFF_COLUMNS = (
    "target",
    "capacity predicted (visits/s)",
    "edge found: fell at | held at",
    "off",
    "tipping delay predicted (s)",
    "collapsed first at (s)",
    "off",
    "not recovered from (s)",
)
DELAY_COLUMNS = (
    "target",
    "incident delay (s)",
    "verdict",
    "visits served during",
    "time to recover",
    "until a user gave up: predicted | measured",
)


def _off(c: CliffTarget, code: str) -> str:
    f = next((f for f in c.findings if f.code.startswith(code)), None)
    off = f.figures.get("off") if f else None
    return DASH if not isinstance(off, float) else f"{100 * off:+.0f}%"


def cliff_row(c: CliffTarget) -> list[str]:
    p = c.prediction
    return [
        c.name,
        num(p.capacity_per_s if p else None),
        f"{num(c.edge_rate)} | {num(c.held_rate)}",
        _off(c, "capacity"),
        num(p.tipping_delay_s if p else None, 2),
        num(c.edge_delay, 1),
        _off(c, "tipping-delay"),
        num(c.unrecovered_delay, 1),
    ]


def delay_rows(c: CliffTarget) -> list[list[str]]:
    rows = []
    for d in c.delays:
        says = held.word(d.held)
        rows.append(
            [
                c.name,
                f"{d.incident_delay:g}",
                error(d.error, 60) if d.error else says + ("" if d.trusted else " (INVALID)"),
                percent(d.visits_served_during),
                "not within the run" if d.recovered is False else num(d.recovery_s, 0, " s"),
                f"{num(d.predicted_lasts_s, 1, ' s')} | {num(d.lasted_s, 0, ' s')}",
            ]
        )
    return rows


CLIFF_READING = (
    "Little's law predicts the edge before anything is measured: a pool of workers x threads "
    "answers at most pool / delay visits a second (its capacity), and at the story's rate it "
    "fills when the third party takes pool / rate seconds (the tipping delay). Past it, a user "
    "arriving behind the backlog waits past the timeout after (timeout - delay) x capacity / "
    "(rate - capacity) seconds. These hold in a steady state only: not in the seconds while "
    "the pool fills, nor once users reload (the rate is then no longer the offered one), nor "
    "for a server that queues inside one busy worker while another has threads free "
    "(Gunicorn's gthread). The edge found: the lowest offered rate whose goodput fell below "
    "95% of it (steps of 5% of the predicted capacity; where even 80% fell, the sweep goes on "
    "at 70, 60, 50 and 40%), and the shortest incident delay at which fewer than 95% of the "
    "visits during it were served."
)


def cliff_blocks(run: StoryRun, cliff: Cliff, chart: str | None) -> list[Block]:
    blocks: list[Block] = [
        Heading(2, "The cliff, predicted and found"),
        Paragraph(CLIFF_READING),
        Paragraph(
            f"Rate sweep: the third party at {cliff.delay:g} s, offered "
            f"{', '.join(f'{100 * s:.0f}%' for s in cliff.shares)} of the predicted capacity; "
            f"the incident at {', '.join(f'{d:g}' for d in cliff.delays)} s, at "
            f"{run.story.rate:g} visits/s."
        ),
        Table(CLIFF_COLUMNS, [cliff_row(c) for c in cliff.targets]),
    ]
    if chart:
        swept = [c.rates for c in cliff.targets if c.rates is not None]
        caption = "goodput against offered load, the predicted capacity marked"
        blocks.append(Image(chart, caption + model_note(swept)))
    blocks.append(Table(DELAY_COLUMNS, [r for c in cliff.targets for r in delay_rows(c)]))
    blocks += [Paragraph(f"{c.name}: {f.message}") for c in cliff.targets for f in c.findings]
    rates = [c.rates for c in cliff.targets if c.rates is not None]
    blocks += predicted.rate_blocks(rates, "The cliff's rate sweep")
    blocks += predicted.delay_blocks(cliff.targets)
    return blocks


def cliff_sweep(cliff: Cliff) -> Sweep:
    """The cliff's rate sweeps as one sweep, to draw like the others: goodput against offered
    load, each pool's predicted capacity marked."""
    steps = [c.rates for c in cliff.targets if c.rates is not None]
    rates = sorted({s.rate for t in steps for s in t.steps}) or [1.0]
    return Sweep(settings=SweepSettings(rates=rates, delay=cliff.delay), targets=steps)

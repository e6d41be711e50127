"""The model's prediction beside each measured row, and the disagreements marked.

The figures are stored with each row (``StoryTarget.predicted``, ``SweepStep.predicted``,
``DelayStep.predicted``, filled by the commands from the model of the incident); this module
only shows them: the targets' table here, the steps' tables in the sweep's and the cliff's
sections. A run that is itself a prediction (``StoryRun.predicted``) says so at the top
instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.notation import DASH, num, percent
from playground.core.odds import Frequency
from playground.incident import edgescore, held
from playground.incident.storyresults import (
    CliffTarget,
    DelayStep,
    StoryRun,
    StoryTarget,
    SweepStep,
    SweepTarget,
)
from playground.incident.targetresults import PredictedFigures
from playground.report.document import Block, Callout, Heading, Inline, Paragraph, Span, Table
from playground.story.cells import label

COLUMNS = (
    "target",
    "figures",
    "verdict",
    "visits served during",
    "goodput/s during",
    "time to recover",
    "attempts/visit",
    "agrees",
)


def _recovery(value: float | None) -> str:
    return "not within the run" if value is None else f"{value:.0f} s"


def _pair(
    head: list[Inline], measured: list[str], predicted: list[str], p: PredictedFigures
) -> list[list[Inline]]:
    """Two rows, one quantity per cell: the measured figures, then the model's beneath them,
    the agreement on the first."""
    return [
        [*head, "measured", *measured, _agrees(p)],
        [*([""] * len(head)), "predicted", *predicted, ""],
    ]


def _incident(
    verdict: str, served: float | None, goodput: float | None, recovery: float | None
) -> list[str]:
    """The incident's figures in the tables' order: verdict, visits served, goodput, recovery."""
    return [verdict, percent(served), num(goodput), _recovery(recovery)]


def _row(t: StoryTarget, run: StoryRun) -> list[list[Inline]]:
    s, p = t.summary, t.predicted
    assert s is not None and p is not None
    if p.error:
        return [_not_modelled(label(t, run), p, len(COLUMNS))]
    return _pair(
        [label(t, run)],
        [
            *_incident(
                held.outcome(s.visits_served_during, s.recovery_s),
                s.visits_served_during,
                s.goodput_during,
                s.recovery_s,
            ),
            num(s.amplification, 2),
        ],
        [
            *_incident(_odds(p), p.visits_served_during, p.goodput_during, p.recovery_s),
            num(p.amplification, 2),
        ],
        p,
    )


def _odds(p: PredictedFigures) -> str:
    """The model's verdict, with its P(collapse) and the draws' interval where it drew the
    target several times."""
    if p.draws is None or p.collapsed_draws is None:
        return p.verdict
    f = Frequency(p.collapsed_draws, p.draws)
    low, high = f.interval
    return (
        f"{p.verdict}; P(collapse) {f.share:.2f}, "
        f"its {p.draws} draws' 95 %: {100 * low:.0f}-{100 * high:.0f} %"
    )


def _error(run: StoryRun) -> list[Block]:
    """What the draws' interval does not cover: the model's error where it was scored, for
    each target of the run that has a scored setting."""
    names = dict.fromkeys(
        t.name.removeprefix("story-") for t in run.targets if t.predicted and t.predicted.draws
    )
    scored = {name: edgescore.error_lines(name) for name in names}
    found = [f"{name} {line}" for name, lines in scored.items() for line in lines[1:-1]]
    if not found:
        return []
    brier = next(lines[-1] for lines in scored.values() if lines)
    return [
        Paragraph(
            "The draws' interval covers the model's own draws, not its error against "
            "measurement. Scored on repeats measured after the model's fit (docs/predict.md, "
            f'"Scored where a pool tips"), at the settings of these targets: {"; ".join(found)}. '
            f"{brier}."
        )
    ]


def _agrees(p: PredictedFigures) -> Inline:
    return "yes" if not p.differs else [Span("NO", bold=True), ": " + "; ".join(p.differs)]


def _not_modelled(name: Inline, p: PredictedFigures, width: int) -> list[Inline]:
    """One row for a target the model does not cover: the reason in its last cell."""
    return [name, *([DASH] * (width - 2)), f"not modelled: {p.error}"]


def predicted_blocks(run: StoryRun) -> list[Block]:
    if run.predicted:
        return [
            Callout(
                "A prediction by the model of the incident (`playground predict`), not a "
                "measurement: the same analysis and verdicts, on simulated users and servers "
                "(docs/predict.md says what each part is modelled on)."
            )
        ]
    rows = [
        row for t in run.targets if t.summary is not None and t.predicted for row in _row(t, run)
    ]
    if not rows:
        return []
    return [
        Heading(2, "Predicted beside measured"),
        Paragraph(
            "Each target again in the model of the incident (`playground predict`, the same "
            "settings and arrivals), the model's figures beneath the measured ones: its "
            "representative draw's, with its P(collapse) over all its draws. A target is "
            "marked where the verdicts differ or the visits served during the incident are more "
            "than 10 points apart."
        ),
        Table(COLUMNS, rows),
        *_error(run),
    ]


AGREEMENT = (
    "the model's figures beneath the measured ones (the model of the incident, `playground "
    "predict`, with the same settings, delay and arrivals); a step is marked where the verdicts "
    "differ or the visits served are more than 10 points apart."
)
RATE_COLUMNS = (
    "target",
    "offered/s",
    "figures",
    "verdict",
    "goodput/s",
    "visits served",
    "attempts/visit",
    "agrees",
)


def _rate_row(name: str, st: SweepStep, p: PredictedFigures) -> list[list[Inline]]:
    amplification = st.attempts_per_s / st.offered_per_s if st.offered_per_s else None
    return _pair(
        [name, f"{st.rate:g}"],
        [
            held.step_outcome(st),
            num(st.goodput_per_s),
            percent(st.visits_served),
            num(amplification, 2),
        ],
        [
            p.verdict,
            num(p.goodput_during),
            percent(p.visits_served_during),
            num(p.amplification, 2),
        ],
        p,
    )


def _rate_rows(m: SweepTarget) -> list[list[Inline]]:
    shown = [(st, st.predicted) for st in m.steps if st.predicted is not None]
    if not shown:
        return []
    if why := next((p for _, p in shown if p.error), None):
        return [_not_modelled(m.name, why, len(RATE_COLUMNS))]
    return [row for st, p in shown for row in _rate_row(m.name, st, p)]


def model_edge(m: SweepTarget) -> float | None:
    """The lowest offered rate at which the model's goodput fell below HELD_SHARE of it."""
    fell = [st.rate for st in m.steps if st.predicted and st.predicted.verdict == held.FELL]
    return min(fell, default=None)


def rate_blocks(sweeps: Sequence[SweepTarget], what: str) -> list[Block]:
    """The rate steps of `what` (the sweep, the cliff's rate sweep) beside the model's."""
    rows = [row for m in sweeps for row in _rate_rows(m)]
    if not rows:
        return []
    edges = [
        f"{m.name} fell at {'none of them' if edge is None else f'{edge:g}/s'}"
        for m in sweeps
        if any(st.predicted and not st.predicted.error for st in m.steps)
        for edge in [model_edge(m)]
    ]
    return [
        Paragraph(
            f"{what}, each step {AGREEMENT} A step held where goodput was at least "
            f"{held.HELD_SHARE:.0%} of the visits offered. In the model: "
            + "; ".join(edges or ["no target modelled"])
            + "."
        ),
        Table(RATE_COLUMNS, rows),
    ]


DELAY_COLUMNS = (
    "target",
    "incident delay (s)",
    "figures",
    "verdict",
    "visits served during",
    "goodput/s during",
    "time to recover",
    "until a user gave up",
    "agrees",
)


def _delay_row(name: str, d: DelayStep, p: PredictedFigures) -> list[list[Inline]]:
    return _pair(
        [name, f"{d.incident_delay:g}"],
        [
            *_incident(
                held.outcome(d.visits_served_during, d.recovery_s),
                d.visits_served_during,
                d.goodput_during,
                d.recovery_s,
            ),
            num(d.lasted_s, 0, " s"),
        ],
        [
            *_incident(p.verdict, p.visits_served_during, p.goodput_during, p.recovery_s),
            num(p.lasted_s, 0, " s"),
        ],
        p,
    )


def _delay_rows(c: CliffTarget) -> list[list[Inline]]:
    shown = [(d, d.predicted) for d in c.delays if d.predicted is not None]
    if not shown:
        return []
    if why := next((p for _, p in shown if p.error), None):
        return [_not_modelled(c.name, why, len(DELAY_COLUMNS))]
    return [row for d, p in shown for row in _delay_row(c.name, d, p)]


def delay_blocks(targets: Sequence[CliffTarget]) -> list[Block]:
    """The cliff's incident delays beside the model's."""
    rows = [row for c in targets for row in _delay_rows(c)]
    if not rows:
        return []
    return [
        Paragraph(f"The incident at each delay, {AGREEMENT}"),
        Table(DELAY_COLUMNS, rows),
    ]

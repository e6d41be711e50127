"""The model's prediction beside each measured target, and the disagreements marked.

The figures are stored with each target (``StoryTarget.predicted``, filled by the commands
from the model of the incident); this module only shows them. A run that is itself a
prediction (``StoryRun.predicted``) says so at the top instead.
"""

from __future__ import annotations

from playground.incident.verdict import outcome
from playground.report.document import Block, Callout, Heading, Paragraph, Table
from playground.story.cells import DASH, label, num, pct
from playground.storymodel import StoryRun, StoryTarget

COLUMNS = (
    "target",
    "verdict measured / predicted",
    "visits served during",
    "goodput/s during",
    "time to recover",
    "attempts/visit",
    "agrees",
)


def _recovery(value: float | None) -> str:
    return "not within the run" if value is None else f"{value:.0f} s"


def _row(t: StoryTarget, run: StoryRun) -> list[str]:
    s, p = t.summary, t.predicted
    assert s is not None and p is not None
    if p.error:
        return [label(t, run), DASH, DASH, DASH, DASH, DASH, f"not modelled: {p.error}"]
    return [
        label(t, run),
        f"{outcome(s.visits_served_during, s.recovery_s)} / {p.verdict}",
        f"{pct(s.visits_served_during)} / {pct(p.visits_served_during)}",
        f"{num(s.goodput_during)} / {num(p.goodput_during)}",
        f"{_recovery(s.recovery_s)} / {_recovery(p.recovery_s)}",
        f"{num(s.amplification, 2)} / {num(p.amplification, 2)}",
        "yes" if not p.differs else "**NO**: " + "; ".join(p.differs),
    ]


def predicted_blocks(run: StoryRun) -> list[Block]:
    if run.predicted:
        return [
            Callout(
                "A prediction by the model of the incident (`playground predict`), not a "
                "measurement: the same analysis and verdicts, on simulated users and servers "
                "(docs/predict.md says what each part is modelled on)."
            )
        ]
    rows = [_row(t, run) for t in run.targets if t.summary is not None and t.predicted]
    if not rows:
        return []
    return [
        Heading(2, "Predicted beside measured"),
        Paragraph(
            "Each target again in the model of the incident (`playground predict`, the same "
            "settings and arrivals), measured / predicted. A row is marked where the verdicts "
            "differ or the visits served during the incident are more than 10 points apart."
        ),
        Table(COLUMNS, rows),
    ]

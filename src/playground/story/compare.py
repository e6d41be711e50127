"""Two story runs side by side (`playground compare RUN_A RUN_B`): per target, each headline
figure of A beside B's, and where their settings differ."""

from __future__ import annotations

from playground.core.notation import num, percent
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.story.cells import recovery, verdict

COMPARE_COLUMNS = ("target", "figure", "A", "B")
COMPARED = (
    "verdict",
    "goodput/s during",
    "visits served during",
    "time to recover",
    "attempts/visit",
    "user p99 during",
)


def _compared(t: StoryTarget | None, run: StoryRun) -> list[str]:
    if t is None:
        return ["missing"] * len(COMPARED)
    s = t.summary
    return [
        verdict(t),
        num(s.goodput_during if s else None),
        percent(s.visits_served_during if s else None),
        recovery(t, run.story.after_s),
        num(s.amplification if s else None, 2),
        num(s.user_latency_p99_during if s else None, 1, " s"),
    ]


def compare_rows(a: StoryRun, b: StoryRun) -> list[list[str]]:
    """Per target of either run (A's order first), each headline figure of A beside B's."""
    names = list(dict.fromkeys([*(t.name for t in a.targets), *(t.name for t in b.targets)]))
    rows = []
    for name in names:
        ca, cb = _compared(a.target(name), a), _compared(b.target(name), b)
        rows += [[name, figure, x, y] for figure, x, y in zip(COMPARED, ca, cb, strict=True)]
    return rows


def settings_differ(a: StoryRun, b: StoryRun) -> list[str]:
    """Where the two runs' settings differ: their figures answer different questions there."""
    return [
        f"settings differ: {name} {getattr(a.story, name)!r} (A) against "
        f"{getattr(b.story, name)!r} (B)"
        for name in vars(a.story)
        if getattr(a.story, name) != getattr(b.story, name)
    ]

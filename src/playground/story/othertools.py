"""The same load from other tools, in the report: ab's closed loop through the incident
(`--closed-loop`) and oha's cross-check of the generator (`--cross-check`)."""

from __future__ import annotations

from playground.report.document import Block, CodeBlock, Heading, Paragraph, Table
from playground.story.cells import DASH, arrow, error, ms, num
from playground.storymodel import CrossCheck, StoryRun, StoryTarget

CLOSED_COLUMNS = (
    "target",
    "ab c",
    "ab requests/s before → during → after",
    "ab failed",
    "ab non-2xx",
    "ab max latency",
    "open loop: goodput/s before → during → after",
    "open loop: timeouts",
    "open loop: attempts/visit",
)


def closed_loop_row(t: StoryTarget) -> list[str]:
    s = t.summary
    opened = (
        [
            arrow([s.goodput_before, s.goodput_during, s.goodput_after]),
            num(s.timeouts),
            num(s.amplification, 2),
        ]
        if s
        else [DASH] * 3
    )
    c = t.closed_loop
    if c is None:
        return [t.name, error(t.closed_loop_error), *([DASH] * 4), *opened]
    return [
        t.name,
        str(c.concurrency),
        arrow([c.phase(n).per_s for n in ("before", "during", "after")]),
        str(c.failed),
        str(c.non_2xx),
        num(c.latency_max_s, 1, " s"),
        *opened,
    ]


CLOSED_READING = (
    "ab's requests/s are the requests it sent in each phase (by their start second, as its "
    "-g file records them); failed and non-2xx are ab's own counts. A closed loop sends its "
    "next request only when one has returned, so it slows down with the server: it reports "
    "'slower', where the open loop's users, who keep arriving, see what the table's right "
    "half shows."
)


def closed_loop_blocks(run: StoryRun, measured: list[StoryTarget]) -> list[Block]:
    """The closed loop's section: the targets measured under ab, beside the open loop."""
    s = run.story
    blocks: list[Block] = [
        Heading(2, "The same incident under a closed loop (ab)"),
        Paragraph(
            f"ab -c {s.closed_loop_concurrency} (what the open loop keeps in flight normally: "
            f"rate x normal delay) for {s.duration:g} s through the same incident, the control "
            f"request sent to the third party the same second. {CLOSED_READING}"
        ),
        Table(CLOSED_COLUMNS, [closed_loop_row(t) for t in measured]),
    ]
    for t in measured:
        if t.closed_loop and t.closed_loop.commands:
            blocks += [
                Paragraph(f"{t.name}, the closed loop's commands:"),
                CodeBlock("\n".join(t.closed_loop.commands)),
            ]
    return blocks


CROSS_COLUMNS = (
    "target",
    "offered/s",
    "goodput/s: openloop | oha",
    "p50: openloop | oha",
    "p99: openloop | oha",
    "errors: openloop | oha",
    "agree (10%)",
)


def crosscheck_row(c: CrossCheck) -> list[str]:
    if c.error or c.openloop is None or c.oha is None:
        return [c.target, f"{c.rate:g}", error(c.error), *([DASH] * 4)]
    a, b = c.openloop, c.oha
    return [
        c.target,
        f"{c.rate:g}",
        f"{a.goodput_per_s:.1f} | {b.goodput_per_s:.1f}",
        f"{ms(a.latency_p50_s)} | {ms(b.latency_p50_s)}",
        f"{ms(a.latency_p99_s)} | {ms(b.latency_p99_s)}",
        f"{a.requests - a.ok} | {b.requests - b.ok}",
        "yes" if not c.differences else "NO: " + "; ".join(c.differences),
    ]


def crosscheck_blocks(checks: list[CrossCheck]) -> list[Block]:
    commands = [cmd for c in checks for cmd in c.commands[:2]][:2]
    return [
        Heading(2, "The generator against oha"),
        Paragraph(
            "The same load from the playground's generator (openloop.py --no-refresh, constant "
            "arrivals) and from oha (-q RATE --latency-correction, a connection per request), "
            "one after the other on one bring-up, the servers drained in between. Goodput: 2xx "
            "answers over the schedule's length; latency of the 2xx answers from their "
            "scheduled send. They agree where each figure is within 10% (latency: or 5 ms)."
        ),
        Table(CROSS_COLUMNS, [crosscheck_row(c) for c in checks]),
        CodeBlock("\n".join(commands)),
    ]

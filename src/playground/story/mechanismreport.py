"""The story report's section on what might decide a collapse: each measurement's candidates
(:mod:`playground.incident.mechanism`) beside its verdict, and the targets whose repeats
stopped early once their verdict was settled (`--settle`)."""

from __future__ import annotations

from playground.core.notation import num
from playground.incident.storyresults import StoryRun
from playground.report.document import Block, Heading, Paragraph, Table
from playground.story import cells

COLUMNS = (
    "target",
    "repeat",
    "verdict",
    "busiest worker's share of requests begun: before / onset",
    "wait for a thread p90 at the onset",
    "held beyond the third party, ms",
    "the app's CPU per request before, ms",
    "host's steal",
)


def blocks(run: StoryRun) -> list[Block]:
    """The section, where a measurement has candidates; nothing otherwise."""
    measured = [t for t in run.targets if t.mechanism is not None]
    out: list[Block] = []
    if measured:
        rows = []
        for t in measured:
            m = t.mechanism
            assert m is not None
            rows.append(
                [
                    t.name,
                    str(t.repeat),
                    cells.verdict(t),
                    f"{num(m.busiest_share_begun_before, 2)} / "
                    f"{num(m.busiest_share_begun_onset, 2)}",
                    num(m.thread_wait_p90_onset_s, 2, " s"),
                    num(m.hold_beyond_onset_ms, 1),
                    num(m.cpu_ms_per_request_before, 2),
                    num(None if m.steal_share is None else 100 * m.steal_share, 2, " %"),
                ]
            )
        out += [
            Heading(2, "What might decide a collapse"),
            Paragraph(
                "Each measurement's candidates, read before the incident and in its first "
                '5 s, before any user reloads (docs/predict.md, "What decides a collapse"): '
                "the app's own log of each request joined with nginx's and slow_api's."
            ),
            Table(COLUMNS, rows),
        ]
    out += [
        Paragraph(
            f"{s.name}: its repeats stopped after {s.repeats} of at most {run.repeat}, its "
            f"verdict settled: collapsed in {s.collapsed} of {s.trusted} trusted repeats "
            f"(--settle {run.settle})."
        )
        for s in run.settled or []
    ]
    return out

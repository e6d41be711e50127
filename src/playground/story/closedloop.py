"""The same incident under a closed loop (ab): what ab saw before, during and after it, and
its section of the report beside the open loop's figures.

ab keeps c requests in flight and sends the next one only when one has returned, so when the
third party slows down ab slows down with it: it sends fewer requests, and none of them waits
in a queue that grows. Its `-g` file gives each request's start (whole seconds of the epoch)
and total time; the rows are sorted by total time, so each request is placed by its start
alone: in the phase holding the middle of its start second (one second's resolution). The
phases cover all time, so every request ab finished lands in exactly one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.notation import DASH, num
from playground.core.tools.abrequests import AbRequest
from playground.core.tools.output import LoadResult
from playground.incident.analysis import percentile
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.incident.targetresults import AbPhase, ClosedLoop
from playground.report.document import Block, CodeBlock, Heading, Paragraph, Table
from playground.story.cells import arrow, error, goodput

PHASES = ("before", "during", "after")


def summarise_ab(
    *,
    requests: Sequence[AbRequest],
    result: LoadResult,
    concurrency: int,
    incident_wall: float,
    incident_s: float,
) -> ClosedLoop:
    """ab's rows and report, split at the incident (`incident_wall`: the Unix time the control
    request was sent)."""
    t0 = min((r.start_s for r in requests), default=int(incident_wall))
    at = incident_wall - t0
    end = max(result.time_taken_s, max((r.start_s - t0 + 1 for r in requests), default=0))
    edges = (0.0, at, at + incident_s, max(end, at + incident_s))
    placed: list[list[float]] = [[], [], []]
    for r in requests:
        middle = r.start_s - t0 + 0.5
        placed[0 if middle < at else 1 if middle < at + incident_s else 2].append(r.total_ms / 1000)
    phases = [
        AbPhase(
            name=name,
            start_s=round(lo, 3),
            end_s=round(hi, 3),
            requests=len(times),
            per_s=len(times) / (hi - lo) if hi - lo >= 1 else None,
            latency_p50_s=percentile(times, 50),
            latency_max_s=max(times) if times else None,
        )
        for name, lo, hi, times in zip(PHASES, edges[:-1], edges[1:], placed, strict=True)
    ]
    problems = []
    if (phased := sum(len(times) for times in placed)) != len(requests):
        problems.append(f"{phased} requests in the phases, {len(requests)} in ab's -g file")
    if len(requests) != result.complete:
        problems.append(
            f"{len(requests)} rows in ab's -g file, ab reported {result.complete} complete"
        )
    return ClosedLoop(
        concurrency=concurrency,
        requests=len(requests),
        complete=result.complete,
        failed=result.failed,
        non_2xx=result.non_2xx,
        rps=result.rps,
        time_taken_s=result.time_taken_s,
        latency_max_s=max((r.total_ms for r in requests), default=0) / 1000 if requests else None,
        incident_at_s=round(at, 3),
        incident_s=incident_s,
        phases=phases,
        adds_up=problems,
    )


# --- in the report ---------------------------------------------------------------------------
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
    opened = [goodput(s), num(s.timeouts), num(s.amplification, 2)] if s else [DASH] * 3
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

"""faults.md: per fault, per mode, what happened; then the commands to do it by hand.

Built on the report's document model (headings, paragraphs, tables, code blocks), so the
faults report is escaped and rendered exactly as the benchmark report is.
"""

from __future__ import annotations

from pathlib import Path

from playground.core.notation import EM_DASH
from playground.faults.analysis import STUCK_FACTOR, STUCK_SLACK_S
from playground.faults.registry import fault_type
from playground.faults.results import (
    FaultFailed,
    FaultRan,
    FaultsRun,
    OutageVerdict,
    OverloadVerdict,
    PhaseStats,
    SlowdownVerdict,
    Verdict,
)
from playground.report.document import (
    Block,
    BulletList,
    Callout,
    CodeBlock,
    Heading,
    Paragraph,
    Span,
    Table,
)
from playground.report.document import render_markdown as _markdown


def _s(value: float | None, digits: int = 2) -> str:
    return EM_DASH if value is None else f"{value:.{digits}f} s"


def _kinds(kinds: dict[str, int]) -> str:
    return ", ".join(f"{k}: {n}" for k, n in kinds.items()) or EM_DASH


def _verdict(target: Verdict) -> str | Span:
    problems = target.aftermath.problems
    return "ok" if not problems else Span("; ".join(problems), bold=True)


def _phase(phases: dict[str, PhaseStats], name: str) -> PhaseStats:
    """A phase as recorded, or an empty one where a record has none (a dash in the table,
    not a traceback)."""
    return phases.get(name) or PhaseStats()


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


#: What the outage table shows where no request started after the service came back.
NOT_MEASURED = "not measured"


def recovery(target: OutageVerdict) -> str:
    """The time to recover, "not recovered", or "not measured" where no request started after
    the service came back (records from before that count was kept read as not recovered)."""
    if target.recover_s is not None:
        return _s(target.recover_s)
    return NOT_MEASURED if target.requests_after_return == 0 else "not recovered"


def outage_table(record: FaultRan) -> Table:
    svc = record.run.stopped_service
    headers = (
        "scenario",
        "c",
        "answers (all)",
        f"while {svc} was down",
        "longest answer while down (bound)",
        "time to recover",
        "stuck workers",
        "verdict",
    )
    rows = [
        [
            t.probed.name,
            str(t.probed.concurrency),
            _kinds(t.kinds),
            _kinds(_phase(t.phases, "during").kinds),
            f"{_s(t.longest_while_down_s)} ({t.answer_bound_s:g} s)",
            recovery(t),
            _yes(t.aftermath.stuck),
            _verdict(t),
        ]
        for t in record.run.targets
        if isinstance(t, OutageVerdict)
    ]
    return Table(headers=headers, rows=rows)


def slowdown_table(record: FaultRan) -> Table:
    headers = (
        "scenario",
        "c",
        "median before / slow / after",
        "queueing while slow (median excess)",
        "200/s before / slow / after",
        "errors",
        "back to normal after",
        "stuck workers",
        "verdict",
    )
    rows = []
    for t in record.run.targets:
        if not isinstance(t, SlowdownVerdict):
            continue
        ph = {p: _phase(t.phases, p) for p in ("before", "slow", "after")}
        errors = {k: n for k, n in t.kinds.items() if k != "200"}
        rows.append(
            [
                t.probed.name,
                str(t.probed.concurrency),
                " / ".join(_s(ph[p].p50_s) for p in ("before", "slow", "after")),
                _s(ph["slow"].excess_p50_s),
                " / ".join(f"{ph[p].ok_rps:g}" for p in ("before", "slow", "after")),
                _kinds(errors),
                _s(t.settle_s) if t.settle_s is not None else "never",
                _yes(t.aftermath.stuck),
                _verdict(t),
            ]
        )
    return Table(headers=headers, rows=rows)


def overload_table(record: FaultRan) -> Table:
    headers = (
        "scenario",
        "ab c",
        "ab: complete, failed (connect/receive/length/exceptions), non-2xx",
        "ab latency p50 / p99 / max",
        "where the load was shed",
        "a fresh request afterwards",
        "stuck workers",
        "verdict",
    )
    rows = []
    for t in record.run.targets:
        if not isinstance(t, OverloadVerdict):
            continue
        ab = t.ab.figures
        if t.ab.error or ab is None:
            figures, latency = t.ab.error or EM_DASH, EM_DASH
        else:
            f = ab.failures
            figures = (
                f"{ab.complete}, {ab.failed} ({f.get('connect', 0)}/"
                f"{f.get('receive', 0)}/{f.get('length', 0)}/"
                f"{f.get('exceptions', 0)}), {ab.non_2xx}"
            )
            lat = ab.latency_ms
            latency = " / ".join(
                EM_DASH if lat.get(k) is None else f"{lat[k] / 1000:.2f} s"
                for k in ("p50", "p99", "max")
            )
        rows.append(
            [
                t.probed.name,
                str(t.probed.concurrency),
                figures,
                latency,
                "; ".join(t.shed),
                f"{t.drain_answer} after {_s(t.drain_s, 1)}",
                _yes(t.aftermath.stuck),
                _verdict(t),
            ]
        )
    return Table(headers=headers, rows=rows)


def _run_blocks(record: FaultRan | FaultFailed) -> list[Block]:
    fault = record.fault if isinstance(record, FaultFailed) else record.run.fault
    files = " + ".join([record.compose_file, *record.overrides])
    blocks: list[Block] = [Heading(2, f"{fault} — {files}")]
    if isinstance(record, FaultFailed):
        return [*blocks, Paragraph(f"Could not run: {record.error}")]
    kind = fault_type(fault)
    blocks.append(kind.table(record))
    targets = record.run.targets
    notes = [f"{t.probed.name}: {n}" for t in targets for n in t.aftermath.notes]
    notes += [f"{t.probed.name}: {t.aftermath.stuck_reason}" for t in targets]
    if notes:
        blocks.append(BulletList(notes))
    if kind.timeline:
        lines = []
        for t in targets:
            lines.append(f"{t.probed.name}:")
            lines += [
                f"  {row['t']:>5.0f} s  " + " ".join(f"{k}:{n}" for k, n in row.items() if k != "t")
                for row in t.aftermath.timeline
            ]
        blocks += [
            Paragraph("Answers per second (by the second they arrived):"),
            CodeBlock("\n".join(lines)),
        ]
    blocks.append(
        Paragraph(
            "Timeline (seconds since the fault run started): "
            + ", ".join(f"{m['t']:.1f} {m['label']}" for m in record.marks)
        )
    )
    blocks += [Paragraph("By hand:"), CodeBlock("\n".join(record.commands))]
    return blocks


def document(run: FaultsRun) -> list[Block]:
    """The faults report as blocks of the report's document model."""
    options = run.settings.options if run.settings is not None else None
    clients = options.concurrency if options is not None else None
    delay = options.delay if options is not None else None
    blocks: list[Block] = [
        Heading(1, f"Faults: run {run.run_id}"),
        Paragraph(["Command: ", Span(run.command or "", code=True)]),
        Paragraph(
            f"Probe: closed loop, c per scenario = {clients or 'its tutorial c'}, "
            f"delay {delay} s; a failed request waits out the delay before the next. "
            "Time to recover: from the service's return until every request started from then "
            "on succeeded. Stuck workers: a burst of the scenario's tutorial concurrency after "
            f"the fault must not take more than {STUCK_FACTOR}x + {STUCK_SLACK_S:g} s the one "
            "before."
        ),
    ]
    if run.finished_at is None:
        blocks.append(
            Callout(
                Span("This run did not finish: the figures below are what it completed.", bold=True)
            )
        )
    for record in run.runs:
        blocks += _run_blocks(record)
    return blocks


def render_markdown(run: FaultsRun) -> str:
    return _markdown(document(run))


def write_report(*, run_dir: Path, run: FaultsRun) -> Path:
    path = run_dir / "faults.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render_markdown(run))
    tmp.replace(path)
    return path

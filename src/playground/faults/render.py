"""faults.md: per fault, per mode, what happened; then the commands to do it by hand.

Built on the report's document model (headings, paragraphs, tables, code blocks), so the
faults report is escaped and rendered exactly as the benchmark report is.
"""

from __future__ import annotations

from pathlib import Path

from playground.faults.analysis import STUCK_FACTOR, STUCK_SLACK_S
from playground.faults.records import Json  # faults.json as on disk, older files included
from playground.faults.run import STOPPED_SERVICE
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

DASH = "—"


def _s(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{value:.{digits}f} s"


def _kinds(kinds: dict[str, int]) -> str:
    return ", ".join(f"{k}: {n}" for k, n in kinds.items()) or DASH


def _verdict(target: Json) -> str | Span:
    return "ok" if not target.get("problems") else Span("; ".join(target["problems"]), bold=True)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


#: What the outage table shows where no request started after the service came back.
NOT_MEASURED = "not measured"


def recovery(target: Json) -> str:
    """The time to recover, "not recovered", or "not measured" where no request started after
    the service came back (records from before that count was kept read as not recovered)."""
    if target["recover_s"] is not None:
        return _s(target["recover_s"])
    return NOT_MEASURED if target.get("requests_after_return") == 0 else "not recovered"


def outage_table(run: Json) -> Table:
    svc = run["stopped_service"]
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
            t["name"],
            str(t["concurrency"]),
            _kinds(t["kinds"]),
            _kinds(t["phases"]["during"]["kinds"]),
            f"{_s(t['longest_while_down_s'])} ({t['answer_bound_s']:g} s)",
            recovery(t),
            _yes(t["stuck"]),
            _verdict(t),
        ]
        for t in run["targets"]
    ]
    return Table(headers=headers, rows=rows)


def slowdown_table(run: Json) -> Table:
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
    for t in run["targets"]:
        ph = t["phases"]
        errors = {k: n for k, n in t["kinds"].items() if k != "200"}
        rows.append(
            [
                t["name"],
                str(t["concurrency"]),
                " / ".join(_s(ph[p]["p50_s"]) for p in ("before", "slow", "after")),
                _s(ph["slow"]["excess_p50_s"]),
                " / ".join(f"{ph[p]['ok_rps']:g}" for p in ("before", "slow", "after")),
                _kinds(errors),
                _s(t["settle_s"]) if t["settle_s"] is not None else "never",
                _yes(t["stuck"]),
                _verdict(t),
            ]
        )
    return Table(headers=headers, rows=rows)


def overload_table(run: Json) -> Table:
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
    for t in run["targets"]:
        ab = t["ab"]
        if ab.get("error"):
            figures, latency = ab["error"], DASH
        else:
            f = ab["failures"]
            figures = (
                f"{ab['complete']}, {ab['failed']} ({f.get('connect', 0)}/"
                f"{f.get('receive', 0)}/{f.get('length', 0)}/"
                f"{f.get('exceptions', 0)}), {ab['non_2xx']}"
            )
            lat = ab["latency_ms"]
            latency = " / ".join(
                DASH if lat.get(k) is None else f"{lat[k] / 1000:.2f} s"
                for k in ("p50", "p99", "max")
            )
        rows.append(
            [
                t["name"],
                str(t["concurrency"]),
                figures,
                latency,
                "; ".join(t["shed"]),
                f"{t['drain_answer']} after {_s(t['drain_s'], 1)}",
                _yes(t["stuck"]),
                _verdict(t),
            ]
        )
    return Table(headers=headers, rows=rows)


def _run_blocks(run: Json) -> list[Block]:
    files = " + ".join([run["compose_file"], *run.get("overrides", [])])
    blocks: list[Block] = [Heading(2, f"{run['fault']} — {files}")]
    if run.get("error"):
        return [*blocks, Paragraph(f"Could not run: {run['error']}")]
    fault = run["fault"]
    if fault in STOPPED_SERVICE:
        blocks.append(outage_table(run))
    elif fault == "upstream-slowdown":
        blocks.append(slowdown_table(run))
    else:
        blocks.append(overload_table(run))
    notes = [f"{t['name']}: {n}" for t in run["targets"] for n in t.get("notes", [])]
    notes += [f"{t['name']}: {t['stuck_reason']}" for t in run["targets"]]
    if notes:
        blocks.append(BulletList(notes))
    if fault != "overload":
        lines = []
        for t in run["targets"]:
            lines.append(f"{t['name']}:")
            lines += [
                f"  {row['t']:>5.0f} s  " + " ".join(f"{k}:{n}" for k, n in row.items() if k != "t")
                for row in t["timeline"]
            ]
        blocks += [
            Paragraph("Answers per second (by the second they arrived):"),
            CodeBlock("\n".join(lines)),
        ]
    blocks.append(
        Paragraph(
            "Timeline (seconds since the fault run started): "
            + ", ".join(f"{m['t']:.1f} {m['label']}" for m in run.get("marks", []))
        )
    )
    blocks += [Paragraph("By hand:"), CodeBlock("\n".join(run.get("commands", [])))]
    return blocks


def document(data: Json) -> list[Block]:
    """The faults report as blocks of the report's document model."""
    st = data.get("settings", {})
    blocks: list[Block] = [
        Heading(1, f"Faults: run {data.get('run_id')}"),
        Paragraph(["Command: ", Span(data.get("command", ""), code=True)]),
        Paragraph(
            f"Probe: closed loop, c per scenario = {st.get('concurrency') or 'its tutorial c'}, "
            f"delay {st.get('delay')} s; a failed request waits out the delay before the next. "
            "Time to recover: from the service's return until every request started from then "
            "on succeeded. Stuck workers: a burst of the scenario's tutorial concurrency after "
            f"the fault must not take more than {STUCK_FACTOR}x + {STUCK_SLACK_S:g} s the one "
            "before."
        ),
    ]
    if data.get("finished_at") is None:
        blocks.append(
            Callout(
                Span("This run did not finish: the figures below are what it completed.", bold=True)
            )
        )
    for run in data.get("runs", []):
        blocks += _run_blocks(run)
    return blocks


def render_markdown(data: Json) -> str:
    return _markdown(document(data))


def write_report(*, run_dir: Path, data: Json) -> Path:
    path = run_dir / "faults.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render_markdown(data))
    tmp.replace(path)
    return path

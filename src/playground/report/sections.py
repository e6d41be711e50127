"""The report's sections, in reading order, as document blocks built from the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playground.core.notation import EM_DASH
from playground.core.results import Entry, Run, ScaleRunSettings, ScaleSettings
from playground.core.verdicts import (
    CONCURRENT_SHARE,
    MIN_STEADY_WAVES,
    NOISY_SPREAD,
    SCALE_GOOD,
    SERIALISED_AT_ONCE,
    TARGET_EFFICIENCY,
)
from playground.report.contendersection import contender_blocks
from playground.report.document import (
    Block,
    BulletList,
    Callout,
    CodeBlock,
    Heading,
    Image,
    Inline,
    Paragraph,
    Span,
    Table,
)
from playground.report.reading import (
    by_section,
    ceiling_for,
    efficiency,
    flatten,
    fmt,
    fmt_pct,
    fmt_rate,
    fmt_spread,
    is_sweep,
    keys_of,
    spread_cell,
    status,
    steady_cell,
    title,
)

HOW_TO_READ = (
    "ab's own figure (ab rps) is what was measured: requests over the run's time. It is capped "
    "at n / ((n/c + 1) · delay): ab sends its first request alone and only opens the other c "
    "connections once it is answered, so a whole extra delay is added to a run that ideally "
    'lasts n/c · delay; the "ab cap" column is that ceiling. Steady rps is c / mean response '
    "time, the rate the server sustains once all c connections are busy; it is shown only where "
    f"the run lasted long enough to reach that steady state (at least {MIN_STEADY_WAVES:g} "
    "response times; "
    'otherwise the cell says "not steady" and Why says how long the run was). Ideal = c / '
    "delay: every request waits exactly the upstream delay and nothing else. Efficiency = "
    "steady / ideal. Spread: how far --repeat runs lie apart ((max − min) / median); above "
    f"{NOISY_SPREAD:.0%} "
    "the entry is marked noisy. The calibration row is the same load aimed at the slow "
    "upstream alone; its steady rps is the harness ceiling no scenario can beat."
)
# The report opens with its first chart and these three lines; the rest is "How to read this".
READING_GUIDE: tuple[Inline, ...] = (
    "Steady rps (the dark bars) is what each server sustained with all c requests in flight; "
    "the ideal is c / delay (the black line), and efficiency is steady over ideal.",
    "ab's own rate (the light bars) stays below its cap (the red dashed line): ab sends its "
    "first request alone. The star is the tutorial's 2020 figure, for comparison.",
    [
        "An entry marked INVALID (failed or non-2xx requests, a saturated load generator) is not "
        "counted; Why says what went wrong, and ",
        Span("How to read this", link="#how-to-read-this"),
        " has the rest.",
    ],
)
THROUGHPUT_HEADERS = (
    "entry",
    "n",
    "c",
    "delay s",
    "ab rps",
    "ab cap",
    "steady rps",
    "ideal",
    "efficiency",
    "ceiling",
    "tutorial",
    "spread",
    "valid",
)
LATENCY_HEADERS = (
    "entry",
    "p50 ms",
    "p99 ms",
    "max ms",
    "max connect ms",
    "failed",
    "non-2xx",
)
RESOURCE_HEADERS = (
    "entry",
    "compose file",
    "threads before",
    "threads peak",
    "processes",
    "RSS peak MB",
    "CPU peak %",
)


def label(entry: Entry) -> str:
    return f"{entry.name} (c={entry.concurrency})"


def status_blocks(run: Run) -> list[Block]:
    blocks: list[Block] = [
        Paragraph(
            f"Started {run.started_at or 'unknown'}; finished {run.finished_at or 'never (incomplete)'}."
        )
    ]
    if not run.finished_at:
        blocks.append(
            Callout(
                [
                    Span("Incomplete run:", bold=True),
                    f" finished_at is null, so the runner was interrupted or is still running. This "
                    f"report covers the {len(run.entries())} entries recorded so far; scenarios that had "
                    "not run yet are simply absent.",
                ]
            )
        )
    return blocks


def valid_cell(entry: Entry) -> list[str | Span]:
    state, reasons = status(entry)
    if state == "ok":
        return ["yes"]
    return [Span("INVALID" if state == "invalid" else "ERROR", bold=True), f": {reasons}"]


def throughput_row(entry: Entry, calibration: Entry | None) -> list[Inline]:
    return [
        Span(entry.name, bold=entry.kind == "calibration"),
        fmt(entry.requests),
        fmt(entry.concurrency),
        fmt(entry.delay, digits=2),
        fmt_spread(entry, "rps"),
        fmt_rate(entry.ab_cap_rps),
        steady_cell(entry),
        fmt_rate(entry.ideal_rps),
        fmt_pct(efficiency(entry)),
        fmt_rate(ceiling_for(entry, calibration)),
        fmt(entry.tutorial_rps, digits=2),
        spread_cell(entry),
        valid_cell(entry),
    ]


def latency_row(entry: Entry) -> list[Inline]:
    return [
        entry.name,
        *(fmt(entry.latency_ms.get(k), digits=0) for k in ("p50", "p99", "max")),
        fmt(entry.connect_max_ms, digits=0),
        fmt(entry.failed),
        fmt(entry.non_2xx),
    ]


def resource_row(entry: Entry) -> list[Inline]:
    return [
        entry.name,
        Span(entry.compose_file, code=True) if entry.compose_file else EM_DASH,
        fmt(entry.threads_before),
        fmt(entry.threads_peak),
        fmt(entry.processes),
        fmt(entry.rss_peak_mb),
        fmt(entry.cpu_peak_pct, digits=0),
    ]


def summary_blocks(run: Run) -> list[Block]:
    """Per section (one per kind), throughput, then latency and errors, then threads and
    memory: one quantity per cell."""
    entries = run.entries()
    blocks: list[Block] = [Heading(2, "Summary")]
    if not entries:
        return [*blocks, Paragraph("No entries were recorded: there is nothing to summarise.")]
    for section_title, group in by_section(entries):
        blocks += [
            Heading(3, section_title),
            Table(THROUGHPUT_HEADERS, [throughput_row(e, run.calibration) for e in group]),
            Table(LATENCY_HEADERS, [latency_row(e) for e in group]),
            Table(RESOURCE_HEADERS, [resource_row(e) for e in group]),
        ]
    if any(len(e.repeats) > 1 for e in entries):
        blocks.append(
            Paragraph(
                'With repeats, ab rps and steady rps read "median (min–max)" over the repeats.'
            )
        )
    bad = [e for e in entries if status(e)[0] != "ok"]
    if bad:
        listed = "; ".join(f"{label(e)} ({status(e)[1]})" for e in bad)
        blocks.append(Paragraph([Span("Not valid:", bold=True), f" {listed}. See Why below."]))
    return blocks


def sweep_blocks(run: Run) -> list[Block]:
    """A name × concurrency pivot of steady rps, so a sweep reads as curves without charts."""
    if not is_sweep(run):
        return []
    cs = sorted({e.concurrency for e in run.scenarios})
    names = list(dict.fromkeys(e.name for e in run.scenarios))
    cells: dict[tuple[str, int], Entry] = {}
    for entry in run.scenarios:
        cells.setdefault(entry.key, entry)
    rows: list[list[Inline]] = []
    for name in names:
        row: list[Inline] = [name]
        for c in cs:
            cell = cells.get((name, c))
            if cell is None:
                row.append(EM_DASH)
                continue
            figure = f"{steady_cell(cell)} ({fmt_pct(efficiency(cell))})"
            row.append(
                [f"{figure} ", Span("invalid", bold=True)] if status(cell)[0] != "ok" else figure
            )
        rows.append(row)
    return [
        Heading(2, "Sweep"),
        Paragraph(
            "Steady requests/s (efficiency against c/delay) for each scenario and concurrency."
        ),
        Table(["scenario", *(f"c={c}" for c in cs)], rows),
    ]


def _probe_said(run: Run, scale: ScaleSettings) -> str:
    """Which probe measured the CPU per request, as it ran: its title (the scale override's
    shape included) and the processes it sampled."""
    probe = run.probe
    if probe is None:
        return scale.probe or "?"
    said = f"{probe.title or probe.name}, c={probe.concurrency}"
    if probe.processes:
        said += f", {fmt(probe.processes)} processes sampled"
    return said


def scale_blocks(run: Run) -> list[Block]:
    """For a scale run: how the delay was chosen, and per mode how far it scaled and what
    one more request in flight costs in memory."""
    scale = run.settings.scale if isinstance(run.settings, ScaleRunSettings) else None
    if scale is None:
        return []
    delays = scale.delays
    blocks: list[Block] = [
        Heading(2, "Scale"),
        Paragraph(
            f"Measured CPU per request: {fmt(scale.cpu_ms_per_request, digits=2)} ms in the "
            f"app ({_probe_said(run, scale)}). So that CPU is not the limit, each "
            f"concurrency gets a delay that keeps the ideal c / delay near {fmt(scale.rate)} "
            f"requests/s, {fmt_pct(scale.utilisation)} of what one core can serve: "
            + ", ".join(f"c={c}: {fmt(d)} s" for c, d in delays.items())
            + "."
        ),
    ]
    rows: list[list[Inline]] = []
    by_name: dict[str, list[Entry]] = {}
    for entry in run.scenarios:
        if entry.kind != "probe":
            by_name.setdefault(entry.name, []).append(entry)
    for name, entries in by_name.items():
        entries.sort(key=lambda e: e.concurrency)
        good = [e for e in entries if e.keeps_scaling]
        first_bad = next((e for e in entries if e not in good), None)
        # Memory per in-flight request only means something where the mode kept up: past
        # that, the extra clients wait in the kernel's listen queue, not in the process.
        top = max(
            (e for e in good if e.rss_per_request_kb is not None),
            key=lambda e: e.concurrency,
            default=None,
        )
        why = f", {status(first_bad)[1]}" if first_bad and status(first_bad)[0] != "ok" else ""
        rows.append(
            [
                name,
                fmt(good[-1].concurrency) if good else EM_DASH,
                f"c={first_bad.concurrency} ({fmt_pct(efficiency(first_bad))}{why})"
                if first_bad
                else "did not stop",
                fmt(max((e.threads_peak or 0 for e in entries), default=None)),
                f"{fmt(top.rss_per_request_kb)} at c={top.concurrency}" if top else EM_DASH,
            ]
        )
    blocks.append(
        Table(
            [
                "mode",
                f"highest c at >= {SCALE_GOOD:.0%} of ideal, no errors",
                "stops scaling at",
                "most OS threads",
                "memory per in-flight request (kB)",
            ],
            rows,
        )
    )
    return blocks


DEMO_HEADERS = (
    "demo",
    "load",
    "ours",
    "published",
    "threads before",
    "threads peak",
    "at once",
    "shape",
)
DEMO_HOW_TO_READ = (
    "At once = the load tool's own requests/s × the sleep: how many sleeping requests the server "
    "overlapped. About 1 means it served them one after another (serialised), however many "
    "clients waited; about c means all of them at once (with ab, at most c · (n/c) / (n/c + 1), "
    f"since ab sends its first request alone). Shape: serialised up to {SERIALISED_AT_ONCE:g} at "
    f"once; concurrent where it held at least {CONCURRENT_SHARE:.0%} of c (steady rps over c / "
    "delay, or for a run too short to be steady the tool's rate over the most it could report); "
    "capped in between. A run with no sleep has no such figure: it measures CPU, not "
    "waiting. Ours is ab's time and requests/s, or the requests wrk completed in its run (its "
    "rate × its time), to compare with the published counts."
)


def demos(run: Run) -> list[Entry]:
    return [e for e in run.scenarios if e.kind == "demo"]


def at_once(entry: Entry) -> float | None:
    """Sleeping requests served at once, the tool's requests/s x delay; None with no sleep.

    The tool's own rate, not steady rps: a server that serialises runs at exactly 1 / delay
    whatever the clients do."""
    if entry.rps is None or not entry.delay or status(entry)[0] == "error":
        return None
    return entry.rps * entry.delay


def demo_shape(entry: Entry) -> str:
    """ "serialised", "capped" or "concurrent" (:func:`playground.core.verdicts.overlap`); a dash
    with no sleep, no figures or an error."""
    if at_once(entry) is None:
        return EM_DASH
    return entry.shape or EM_DASH


def demo_cells(entry: Entry) -> list[str]:
    tool = entry.tool or "?"
    sleep = f"sleep {entry.delay:g} s" if entry.delay else "no sleep"
    if tool == "ab":
        load = f"ab -n {fmt(entry.requests)} -c {fmt(entry.concurrency)}, {sleep}"
        ours = f"{fmt(entry.time_taken_s, digits=3)} s, {fmt(entry.rps, digits=2)} rps"
    else:
        load = f"{tool} -c {fmt(entry.concurrency)}, {sleep}"
        done = (
            f"{entry.rps * entry.time_taken_s:,.0f}"
            if entry.rps is not None and entry.time_taken_s is not None
            else EM_DASH
        )
        ours = f"{done} requests in {fmt(entry.time_taken_s, digits=1)} s"
    if status(entry)[0] != "ok":
        ours += f" ({status(entry)[0]})"
    return [
        entry.name,
        load,
        ours,
        entry.published or EM_DASH,
        fmt(entry.threads_before),
        fmt(entry.threads_peak),
        fmt(at_once(entry), digits=1),
        demo_shape(entry),
    ]


def demo_blocks(run: Run) -> list[Block]:
    entries = demos(run)
    if not entries:
        return []
    serialised = [e.name for e in entries if demo_shape(e) == "serialised"]
    return [
        Heading(2, "Companion demos: published vs ours"),
        Paragraph(DEMO_HOW_TO_READ),
        Table(DEMO_HEADERS, [demo_cells(e) for e in entries]),
        Paragraph(
            [
                Span("Serialised:", bold=True),
                " " + (", ".join(serialised) if serialised else "none") + ".",
            ]
        ),
    ]


def why_items(entry: Entry) -> list[Inline]:
    """Error, invalid reasons, the target's own notes, then the diagnosis' findings."""
    items: list[Inline] = []
    if entry.error:
        items.append([Span("could not run:", bold=True), f" {entry.error}"])
    items += [
        [Span("invalid:", bold=True), f" {r}"]
        for r in entry.invalid_reasons
        if r and r != entry.error
    ]
    said = {f.message for f in entry.findings}
    # Notes that are not a finding's message: the target's own (or an older file's notes).
    items += [n for n in entry.notes if n and n not in said]
    items += [[Span(f"{f.severity}:", bold=True), f" {f.message}"] for f in entry.findings]
    eff = efficiency(entry)
    if eff is not None and eff < TARGET_EFFICIENCY and not items:
        items.append(
            f"reached {fmt_pct(eff)} of the ideal c/delay and the runner recorded no diagnosis"
        )
    return items


def why_blocks(run: Run) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Why")]
    explained = 0
    for entry in run.entries():
        items = why_items(entry)
        if not items:
            continue
        explained += 1
        blocks.append(Heading(3, label(entry) + (f" — {entry.title}" if entry.title else "")))
        eff = efficiency(entry)
        if eff is not None:
            blocks.append(
                Paragraph(
                    f"Steady {fmt(entry.steady_rps)} rps of an ideal "
                    f"{fmt(entry.ideal_rps)} ({fmt_pct(eff)})."
                )
            )
        elif entry.rps is not None:
            blocks.append(
                Paragraph(
                    f"Measured {fmt(entry.rps, digits=2)} rps (ab's own figure); no steady figure."
                )
            )
        blocks.append(BulletList(items))
    if not explained:
        blocks.append(
            Paragraph(
                f"Nothing to explain: every entry is valid, reached at least "
                f"{TARGET_EFFICIENCY:.0%} of its ideal, and carries no notes."
            )
        )
    return blocks


def reproduce_blocks(run: Run) -> list[Block]:
    return [
        Heading(2, "How to reproduce"),
        Paragraph("The whole run:"),
        CodeBlock(run.command or "# command not recorded"),
        Paragraph(
            'Each entry\'s own commands (up, load, down) are under "Commands per entry" below.'
        ),
    ]


def entry_command_blocks(run: Run) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Commands per entry")]
    labels = {
        "up": "bring it up",
        "pin": "give the app its own cores (--pin-cpus)",
        "load": "load it (from inside the compose network)",
        "host_load": "or load it from the host",
        "threads": "watch its threads",
        "down": "tear it down",
    }
    for entry in run.entries():
        commands = {k: v for k, v in entry.commands.items() if v}
        if not commands:
            continue
        ordered = [k for k in labels if k in commands] + sorted(
            k for k in commands if k not in labels
        )
        blocks += [
            Heading(3, label(entry)),
            CodeBlock("\n".join(f"# {labels.get(k, k)}\n{commands[k]}" for k in ordered)),
        ]
    if len(blocks) == 1:
        blocks.append(Paragraph("No entry recorded its commands."))
    return blocks


def key_value_table(mapping: dict[str, Any]) -> Table:
    return Table(
        ["key", "value"], [[Span(k, code=True), v or EM_DASH] for k, v in flatten(mapping).items()]
    )


def environment_blocks(run: Run) -> list[Block]:
    return [
        Heading(2, "Environment"),
        key_value_table(keys_of(run.environment))
        if run.environment
        else Paragraph("Not recorded."),
        Heading(2, "Settings"),
        key_value_table(keys_of(run.settings)) if run.settings else Paragraph("Not recorded."),
        Paragraph(f"Results schema version: {fmt(run.schema_version)}."),
    ]


def lead_blocks(charts: Sequence[tuple[str, str]]) -> list[Block]:
    """What the report opens with: its first chart (the throughput one), and how to read it."""
    return [*(Image(name, alt) for name, alt in charts[:1]), BulletList(READING_GUIDE)]


def chart_blocks(
    charts: Sequence[tuple[str, str]], timelines: Sequence[tuple[str, str]]
) -> list[Block]:
    """Charts by relative file name (the HTML swaps in data URIs): the comparison charts after
    the one the report opens with, then per entry what `top -H` showed through the run."""
    blocks: list[Block] = [Heading(2, "Charts")]
    if not charts and not timelines:
        return [*blocks, Paragraph("No chart: no entry has figures to plot.")]
    if len(charts) == 1 and not timelines:
        return [*blocks, Paragraph("The throughput chart is at the top of the report.")]
    charts = charts[1:]
    blocks += [Image(name, alt) for name, alt in charts]
    if timelines:
        blocks += [
            Heading(2, "What top -H shows, through the run"),
            Paragraph(
                "Per entry, sampled every 0.5 s while the load ran: the server's OS threads (all "
                "processes), resident memory, and CPU (100% = one core)."
            ),
        ]
        blocks += [Image(name, alt) for name, alt in timelines]
    return blocks


def document(
    run: Run,
    charts: Sequence[tuple[str, str]],
    timelines: Sequence[tuple[str, str]] = (),
    *,
    contenders_chart: str | None = None,
) -> list[Block]:
    """The whole report, in reading order; ``contenders_chart``: the contenders' chart file,
    shown in their section."""
    return [
        Heading(1, title(run)),
        *lead_blocks(charts),
        *status_blocks(run),
        *summary_blocks(run),
        Heading(2, "How to read this"),
        Paragraph(HOW_TO_READ),
        *reproduce_blocks(run),
        *sweep_blocks(run),
        *scale_blocks(run),
        *contender_blocks(run, contenders_chart),
        *demo_blocks(run),
        *why_blocks(run),
        *chart_blocks(charts, timelines),
        *environment_blocks(run),
        *entry_command_blocks(run),
    ]

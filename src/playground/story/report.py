"""The story's report: the run's document (its settings, the headline's tables from :mod:`.headline`,
the spread over repeats, a section per target) and its writing, as blocks of the one document model
(:mod:`playground.report.document`, which writes the Markdown and the HTML). Each other part
shows itself where it is measured: :mod:`.closedloop`, :mod:`.sweep` (its chart too),
:mod:`.crosscheck` and :mod:`.cliff`; the per-second charts are :mod:`.charts`.

Every verdict it shows was decided when the target was measured (:mod:`.findings`); this
module only reads them.
"""

from __future__ import annotations

from pathlib import Path

from playground.core.notation import DASH
from playground.incident import charts
from playground.incident.held import COLLAPSED, ERROR, HELD, HELD_SHARE, NOT_RECOVERED
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryRun, TargetSpread
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
    render_html,
    render_markdown,
)
from playground.story import (
    cells,
    cliff,
    headline,
    mechanismreport,
    oddsreport,
    outsidereport,
    repeats,
    swarmreport,
    sweep,
)
from playground.story.cells import label
from playground.story.closedloop import closed_loop_blocks
from playground.story.crosscheck import crosscheck_blocks
from playground.story.predicted import predicted_blocks

VERDICT_COLUMNS = (
    "target",
    "trusted repeats",
    "held",
    "collapsed",
    *(name for _, name in cells.OUTCOMES[1:]),
    "time to recover",
)
SPREAD_COLUMNS = (
    "target",
    "goodput/s during",
    "goodput/s after",
    "visits served during",
    "attempts/visit",
    "user p99 during (s)",
)


def _median_range(spread: TargetSpread, name: str, digits: int, scale: float = 1.0) -> str:
    f = spread.figure(name)
    if f is None or f.median is None or f.min is None or f.max is None:
        return DASH
    m, lo, hi = (v * scale for v in (f.median, f.min, f.max))
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def verdict_row(spread: TargetSpread) -> list[str]:
    """How often each verdict came out over the trusted repeats, k of n, and the time to
    recover with the repeats that did not recover censored."""
    return [
        spread.name,
        f"{spread.trusted} of {spread.repeats} measured",
        cells.often(spread.frequency(HELD)),
        cells.often(spread.frequency(COLLAPSED, NOT_RECOVERED)),
        *(cells.often(spread.frequency(o)) for o, _ in cells.OUTCOMES[1:]),
        cells.recovery_times(spread.recovery),
    ]


def spread_row(spread: TargetSpread) -> list[str]:
    return [
        spread.name,
        _median_range(spread, "goodput_during", 1),
        _median_range(spread, "goodput_after", 1),
        _median_range(spread, "visits_served_during", 0, 100.0),
        _median_range(spread, "amplification", 2),
        _median_range(spread, "user_latency_p99_during", 1),
    ]


def repeats_blocks(run: StoryRun) -> list[Block]:
    """Each target over its repeats, from the measurements themselves (an older run's stored
    spreads are drawn again by the same code)."""
    spreads = repeats.spreads(run.targets, after_s=run.story.after_s)
    return [
        Heading(2, f"Each target over {run.repeat} repeats"),
        Paragraph(
            "How often each verdict came out over the repeats whose figures can be trusted, "
            "each on a fresh bring-up: k of n with its 95 % interval (Wilson's). Time to "
            "recover: the median (Kaplan-Meier) and the range, a repeat that did not recover "
            f"within the run counted as taking over {run.story.after_s:g} s, not left out."
        ),
        Table(VERDICT_COLUMNS, [verdict_row(sp) for sp in spreads]),
        Paragraph(
            "The headline figures: median (min-max) over the same repeats; visits served in %."
        ),
        Table(SPREAD_COLUMNS, [spread_row(sp) for sp in spreads]),
        *[Paragraph(f"{sp.name}: {f.message}") for sp in spreads for f in sp.findings],
        Heading(2, "Every measurement"),
    ]


def _errors(run: StoryRun) -> list[str]:
    """Every finding that makes figures untrustworthy, for a callout no reader can miss."""
    named = [(t.name, t.findings) for t in run.targets]
    named += [(f"{t.name} (sweep)", t.findings) for t in (run.sweep.targets if run.sweep else [])]
    return [f"{name}: {f.message}" for name, found in named for f in found if f.severity == ERROR]


def _reloads(s: StorySettings) -> str:
    if s.refresh_backoff == 1:
        return f"waits {s.refresh_delay:g} s and reloads"
    return (
        f"waits about {s.refresh_delay:g} s and reloads, each wait {s.refresh_backoff:g} times "
        "the one before (users who back off; every wait times a seeded jitter of 0.5-1.5)"
    )


def _settings(run: StoryRun) -> Paragraph:
    s = run.story
    return Paragraph(
        f"{s.rate:g} visits/s ({s.arrival}, seed {s.seed}) for {s.duration:g} s; the third "
        f"party answers in {s.normal_delay:g} s, then in {s.incident_delay:g} s from second "
        f"{s.before_s:g} for {s.incident_s:g} s, then in {s.normal_delay:g} s again. A user "
        f"gives up after {s.timeout:g} s, {_reloads(s)}, up to "
        f"{s.max_attempts} attempts. Thread pools: {s.workers} processes x {s.threads} "
        f"threads; gevent: {s.workers} x {s.async_cores}; uWSGI's listen queue {s.listen}."
        + _share(s)
    )


def _share(s: StorySettings) -> str:
    if s.busiest_share is None:
        return ""
    return (
        f" The model's busiest Gunicorn worker takes {s.busiest_share:.1%} of the new "
        "connections (--busiest-share), not the share measured."
    )


READING = (
    "Goodput is answers with status 2xx per second. Latency is a user's, from the intended "
    "send of the first attempt to the first success, refreshes included; a user never served "
    "counts with what they had waited when they gave up. 499s: requests nginx logged as "
    "499 (the client had gone; the app still worked on them). Calls for nobody: calls the "
    "third party answered after nginx had already ended their request (the user had gone or "
    "had an error), of all the calls it answered, joined on the request's id; counted at the "
    "third party, up to the end of the run (a call still waiting then is not counted). Time "
    "to recover: from the end of the incident until goodput is back to 95% of the answers due (visits arriving, "
    "shifted by the normal latency) over 5 s windows with at most 5% failing, and stays so "
    "until the arrivals stop (whole seconds, counted from the first after the incident). "
    "Verdict: held where at least 95% of the visits during the incident were served; a run "
    "whose load generator did not keep its schedule is marked INVALID and is no headline."
)

#: The report opens with its chart and three lines on how to read it; the rest is READING,
#: under "How to read this".
CHART_LINE = {
    "overlay": "The chart: every target's goodput (answers with status 2xx) per second through "
    "the run; the shaded band is the incident.",
    "target": "The chart: {name}'s goodput (answers with status 2xx), queues and latency per "
    "second through the run; the shaded band is the incident.",
    "none": "Goodput: answers with status 2xx per second, before, during and after the incident.",
}
GUIDE_REST: tuple[Inline, ...] = (
    f"Verdict: held where at least {HELD_SHARE:.0%} of the visits during the incident were "
    "served, else collapsed; time to recover counts from the end of the incident.",
    [
        "A run whose load generator did not keep its schedule is INVALID and its figures are "
        "withheld; ",
        Span("How to read this", link="#how-to-read-this"),
        " has the rest.",
    ],
)
OVERLAY_ALT = "goodput per second of every target, the incident shaded"


def lead_blocks(run: StoryRun, target_charts: dict[str, str], overlay: str | None) -> list[Block]:
    """The chart the report opens with (every target's goodput, or the one target's chart),
    then the three lines on how to read it and what was run."""
    blocks: list[Block] = []
    line = CHART_LINE["none"]
    if overlay:
        blocks, line = [Image(overlay, OVERLAY_ALT)], CHART_LINE["overlay"]
    elif first := next((t for t in run.targets if label(t, run) in target_charts), None):
        chart = target_charts[label(first, run)]
        blocks = [Image(chart, f"{first.name}: goodput, queues and latency per second")]
        line = CHART_LINE["target"].format(name=label(first, run))
    return [*blocks, BulletList([line, *GUIDE_REST])]


def _target_blocks(run: StoryRun, target_charts: dict[str, str], opened: set[str]) -> list[Block]:
    """Each charted target: its findings, its chart (unless the lead showed it), its commands."""
    blocks: list[Block] = []
    for t in run.targets:
        if (chart := target_charts.get(label(t, run))) is None:
            continue
        title = t.title or t.name
        blocks += [
            Heading(2, f"{title}, repeat {t.repeat}" if run.repeat > 1 else title),
            BulletList([f.message for f in t.findings] or ["no findings"]),
        ]
        if chart not in opened:
            blocks.append(Image(chart, f"{t.name}: goodput, queues and latency per second"))
        blocks += [
            CodeBlock("\n".join(t.commands)),
            *outsidereport.target_blocks(t),
            *swarmreport.target_blocks(t),
        ]
    return blocks


def document(
    run: StoryRun,
    target_charts: dict[str, str],
    sweep_chart: str | None,
    cliff_chart: str | None = None,
    overlay: str | None = None,
    map_chart: str | None = None,
) -> list[Block]:
    lead = lead_blocks(run, target_charts, overlay)
    blocks: list[Block] = [
        Heading(1, "The war story: an incident at the third party, open-loop users"),
        *lead,
        outsidereport.settings(run) if outsidereport.all_outside(run.targets) else _settings(run),
        *swarmreport.lead(run.targets),
    ]
    if run.predicted:
        blocks += predicted_blocks(run)
        blocks += oddsreport.odds_blocks(run) + oddsreport.map_blocks(run, map_chart)
    if run.finished_at is None:
        blocks.append(Callout("This run did not finish: the targets below are the ones it did."))
    if errors := _errors(run):
        blocks.append(Callout("Not trusted: " + " | ".join(errors)))
    measured = [t for t in run.targets if t.summary or t.error]
    if run.repeat > 1 and run.targets:
        blocks += repeats_blocks(run)
    rows = headline.headline_rows(run, measured)
    outside = outsidereport.all_outside(measured)
    on_stack = swarmreport.all_on_stack(measured)
    if outside:
        blocks += outsidereport.summary_tables(rows)
    elif on_stack:
        blocks += outsidereport.summary_tables(rows, why=swarmreport.ON_STACK)
    elif measured:
        blocks += headline.tables(rows)
    blocks += [Heading(2, "How to read this"), Paragraph(READING)]
    blocks += mechanismreport.blocks(run)
    # The model knows the playground's own targets, not a service measured by its URL nor
    # a replicated stack.
    if not run.predicted and not outside and not on_stack:
        blocks += predicted_blocks(run)
    if ab := [t for t in run.targets if t.closed_loop or t.closed_loop_error]:
        blocks += closed_loop_blocks(run, ab)
    if run.sweep is not None:
        blocks += sweep.sweep_blocks(run, run.sweep, sweep_chart)
    if run.crosschecks:
        blocks += crosscheck_blocks(run.crosschecks)
    if run.cliff is not None:
        blocks += cliff.cliff_blocks(run, run.cliff, cliff_chart)
    opened = {b.file_name for b in lead if isinstance(b, Image)}  # not drawn a second time
    blocks += _target_blocks(run, target_charts, opened)
    blocks += [
        Heading(2, "Run"),
        Paragraph(f"Run {run.run_id}, started {run.started_at}, finished {run.finished_at}."),
        CodeBlock(run.command or ""),
    ]
    return blocks


def write_report(*, run_dir: Path, run: StoryRun) -> list[Path]:
    """The charts, report.md and a self-contained report.html; the paths, report first."""
    target_charts: dict[str, str] = {}
    for t in run.targets:
        if t.seconds:
            name = charts.target_chart_name(t, repeated=run.repeat > 1)
            charts.plot_target(t, run.story, run_dir / name)
            target_charts[label(t, run)] = name
    sweep_chart = None
    if run.sweep is not None and any(m.steps for m in run.sweep.targets):
        sweep_chart = sweep.SWEEP_CHART
        sweep.plot_sweep(run.sweep, run.story, run_dir / sweep_chart)
    overlay = None
    firsts = [t for t in run.targets if t.seconds and t.repeat == 1]
    if len(firsts) > 1:
        overlay = charts.OVERLAY_CHART
        charts.plot_overlay(firsts, run.story, run_dir / overlay)
    cliff_chart = None
    if run.cliff is not None and any(c.rates and c.rates.steps for c in run.cliff.targets):
        cliff_chart = cliff.CLIFF_CHART
        sweep.plot_sweep(cliff.cliff_sweep(run.cliff), run.story, run_dir / cliff_chart)
    map_chart = None
    if run.odds_map is not None and run.odds_map.cells:
        map_chart = oddsreport.MAP_CHART
        oddsreport.plot_map(run.odds_map, run_dir / map_chart)
    blocks = document(run, target_charts, sweep_chart, cliff_chart, overlay, map_chart)
    names = [
        n for n in (overlay, *target_charts.values(), sweep_chart, cliff_chart, map_chart) if n
    ]
    images = {name: (run_dir / name).read_bytes() for name in names}
    md, page = run_dir / "report.md", run_dir / "report.html"
    md.write_text(render_markdown(blocks), encoding="utf-8", newline="\n")
    page.write_text(
        render_html(blocks, title="The war story", images=images), encoding="utf-8", newline="\n"
    )
    return [md, page, *(run_dir / name for name in names)]

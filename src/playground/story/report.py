"""What the story's report says: its tables, its charts and its words, as blocks of the one
document model (:mod:`playground.report.document`, which writes the Markdown and the HTML).

Every verdict it shows was decided when the target was measured (:mod:`.findings`); this
module only reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from playground.report.document import (
    Block,
    BulletList,
    Callout,
    CodeBlock,
    Heading,
    Image,
    Paragraph,
    Table,
    render_html,
    render_markdown,
)
from playground.story import charts, findings
from playground.story.findings import ERROR, held, trusted
from playground.storymodel import (
    CliffTarget,
    CrossCheck,
    StoryRun,
    StoryTarget,
    Sweep,
    TargetSpread,
)

DASH = "-"


def _f(value: float | int | None, digits: int = 1, unit: str = "") -> str:
    if value is None:
        return DASH
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{100 * value:.0f}%"


def _arrow(values: Sequence[float | None]) -> str:
    return " → ".join(_f(v, 0) for v in values)


def verdict(t: StoryTarget) -> str:
    """The target's verdict cell: held or collapsed, and whether its figures can be trusted."""
    if t.error:
        return "error: " + t.error[:80]
    says = findings.word(held(t))
    if not trusted(t):
        return f"{says} (INVALID run: not a headline)"
    return says


def _recovery(t: StoryTarget, after_s: float) -> str:
    if t.summary is None:
        return DASH
    if t.summary.recovery_s is None:
        return f"not within the run (> {after_s:g} s)"
    return f"{t.summary.recovery_s:.0f} s"


COLUMNS = (
    "target",
    "verdict",
    "arrivals/s",
    "goodput/s before → during → after",
    "visits served during",
    "time to recover",
    "attempts/visit",
    "timeouts",
    "errors (p50 time to one)",
    "wasted (499)",
    "peak in flight",
    "peak listen queue",
    "threads before → peak",
    "peak memory",
    "user p99 during",
    "send lag p99",
    "Little's law: pool answers/s at the incident",
)


def _predicted(t: StoryTarget) -> str:
    p = t.prediction
    if p is None:
        return DASH
    over = f"over by {p.rate - p.capacity_per_s:.1f}/s" if p.over else "within"
    return f"{p.capacity_per_s:.1f} for {p.rate:g} ({over})"


def label(t: StoryTarget, run: StoryRun) -> str:
    """The target's name, and which repeat where there are several."""
    return f"{t.name} #{t.repeat}" if run.repeat > 1 else t.name


def summary_row(t: StoryTarget, after_s: float, name: str | None = None) -> list[str]:
    s = t.summary
    if s is None:
        return [name or t.name, verdict(t), *([DASH] * (len(COLUMNS) - 2))]
    lag = t.check.send_lag_p99_s if t.check else None
    return [
        name or t.name,
        verdict(t),
        _f(s.arrival_rate),
        _arrow([s.goodput_before, s.goodput_during, s.goodput_after]),
        _pct(s.visits_served_during),
        _recovery(t, after_s),
        _f(s.amplification, 2),
        _f(s.timeouts),
        f"{_f(s.errors)} ({_f(s.error_latency_p50_s, 2, ' s')})" if s.errors else "0",
        _f(s.wasted_499),
        _f(s.peak_in_flight),
        _f(s.peak_listen_queue),
        f"{_f(s.threads_before)} → {_f(s.peak_threads)}",
        _f(s.peak_rss_mb, 0, " MB"),
        _f(s.user_latency_p99_during, 1, " s"),
        _f(None if lag is None else lag * 1000, 1, " ms"),
        _predicted(t),
    ]


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
            _arrow([s.goodput_before, s.goodput_during, s.goodput_after]),
            _f(s.timeouts),
            _f(s.amplification, 2),
        ]
        if s
        else [DASH] * 3
    )
    c = t.closed_loop
    if c is None:
        return [t.name, "error: " + (t.closed_loop_error or "?")[:80], *([DASH] * 4), *opened]
    return [
        t.name,
        str(c.concurrency),
        _arrow([c.phase(n).per_s for n in ("before", "during", "after")]),
        str(c.failed),
        str(c.non_2xx),
        _f(c.latency_max_s, 1, " s"),
        *opened,
    ]


SWEEP_COLUMNS = (
    "target",
    "offered/s",
    "measured offered/s",
    "attempts/s",
    "goodput/s",
    "timeouts",
    "errors",
    "visits served",
    "user p50",
    "user p99",
    "valid",
)


def sweep_rows(sweep: Sweep) -> list[list[str]]:
    rows = []
    for m in sweep.targets:
        if m.error:
            rows.append([m.name, "error: " + m.error[:80], *([DASH] * 9)])
        for st in m.steps:
            reasons = st.check.reasons if st.check else ["no self-check"]
            rows.append(
                [
                    m.name,
                    f"{st.rate:g}",
                    _f(st.offered_per_s),
                    _f(st.attempts_per_s),
                    _f(st.goodput_per_s),
                    str(st.timeouts),
                    str(st.errors),
                    _pct(st.visits_served),
                    _f(st.latency_p50_s, 2, " s"),
                    _f(st.latency_p99_s, 2, " s"),
                    "yes" if st.valid else "no: " + "; ".join(reasons),
                ]
            )
    return rows


SPREAD_COLUMNS = (
    "target",
    "verdicts (trusted repeats)",
    "goodput/s during",
    "goodput/s after",
    "visits served during",
    "time to recover (s)",
    "attempts/visit",
    "user p99 during (s)",
)


def _median_range(spread: TargetSpread, name: str, digits: int, scale: float = 1.0) -> str:
    f = spread.figure(name)
    if f is None or f.median is None or f.min is None or f.max is None:
        return DASH
    m, lo, hi = (v * scale for v in (f.median, f.min, f.max))
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def spread_row(spread: TargetSpread) -> list[str]:
    counts = {v: spread.verdicts.count(v) for v in dict.fromkeys(spread.verdicts)}
    verdicts = ", ".join(f"{v} {n}" for v, n in counts.items()) or "none trusted"
    if any(f.code == "verdict-split" for f in spread.findings):
        verdicts = f"SPLIT: {verdicts}"
    recovered = spread.figure("recovery_s")
    missing = recovered is not None and any(v is None for v in recovered.values)
    recovery = _median_range(spread, "recovery_s", 0)
    if recovery == DASH and missing:
        recovery = "not within the run"
    elif missing:
        recovery += " (not within the run in some)"
    return [
        spread.name,
        f"{verdicts} of {spread.trusted} trusted ({spread.repeats} measured)",
        _median_range(spread, "goodput_during", 1),
        _median_range(spread, "goodput_after", 1),
        _median_range(spread, "visits_served_during", 0, 100.0),
        recovery,
        _median_range(spread, "amplification", 2),
        _median_range(spread, "user_latency_p99_during", 1),
    ]


CROSS_COLUMNS = (
    "target",
    "offered/s",
    "goodput/s: openloop | oha",
    "p50: openloop | oha",
    "p99: openloop | oha",
    "errors: openloop | oha",
    "agree (10%)",
)


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{1000 * value:.0f} ms"


def crosscheck_row(c: CrossCheck) -> list[str]:
    if c.error or c.openloop is None or c.oha is None:
        return [c.target, f"{c.rate:g}", "error: " + (c.error or "?")[:80], *([DASH] * 4)]
    a, b = c.openloop, c.oha
    return [
        c.target,
        f"{c.rate:g}",
        f"{a.goodput_per_s:.1f} | {b.goodput_per_s:.1f}",
        f"{_ms(a.latency_p50_s)} | {_ms(b.latency_p50_s)}",
        f"{_ms(a.latency_p99_s)} | {_ms(b.latency_p99_s)}",
        f"{a.requests - a.ok} | {b.requests - b.ok}",
        "yes" if not c.differences else "NO: " + "; ".join(c.differences),
    ]


def _crosschecks(run: StoryRun) -> list[Block]:
    if not run.crosschecks:
        return []
    commands = [cmd for c in run.crosschecks for cmd in c.commands[:2]][:2]
    return [
        Heading(2, "The generator against oha"),
        Paragraph(
            "The same load from the playground's generator (openloop.py --no-refresh, constant "
            "arrivals) and from oha (-q RATE --latency-correction, a connection per request), "
            "one after the other on one bring-up, the servers drained in between. Goodput: 2xx "
            "answers over the schedule's length; latency of the 2xx answers from their "
            "scheduled send. They agree where each figure is within 10% (latency: or 5 ms)."
        ),
        Table(CROSS_COLUMNS, [crosscheck_row(c) for c in run.crosschecks]),
        CodeBlock("\n".join(commands)),
    ]


CLIFF_COLUMNS = (
    "target",
    "capacity predicted (visits/s)",
    "edge found: fell at | held at",
    "off",
    "tipping delay predicted (s)",
    "collapsed first at (s)",
    "off",
    "not recovered from (s)",
)
DELAY_COLUMNS = (
    "target",
    "incident delay (s)",
    "verdict",
    "visits served during",
    "time to recover",
    "until a user gave up: predicted | measured",
)


def _off(c: CliffTarget, code: str) -> str:
    f = next((f for f in c.findings if f.code.startswith(code)), None)
    off = f.figures.get("off") if f else None
    return DASH if not isinstance(off, float) else f"{100 * off:+.0f}%"


def cliff_row(c: CliffTarget) -> list[str]:
    p = c.prediction
    return [
        c.name,
        _f(p.capacity_per_s if p else None),
        f"{_f(c.edge_rate)} | {_f(c.held_rate)}",
        _off(c, "capacity"),
        _f(p.tipping_delay_s if p else None, 2),
        _f(c.edge_delay, 1),
        _off(c, "tipping-delay"),
        _f(c.unrecovered_delay, 1),
    ]


def delay_rows(c: CliffTarget) -> list[list[str]]:
    rows = []
    for d in c.delays:
        says = findings.word(d.held)
        rows.append(
            [
                c.name,
                f"{d.incident_delay:g}",
                ("error: " + d.error[:60])
                if d.error
                else says + ("" if d.trusted else " (INVALID)"),
                _pct(d.visits_served_during),
                "not within the run" if d.recovered is False else _f(d.recovery_s, 0, " s"),
                f"{_f(d.predicted_lasts_s, 1, ' s')} | {_f(d.lasted_s, 0, ' s')}",
            ]
        )
    return rows


CLIFF_READING = (
    "Little's law predicts the edge before anything is measured: a pool of workers x threads "
    "answers at most pool / delay visits a second (its capacity), and at the story's rate it "
    "fills when the third party takes pool / rate seconds (the tipping delay). Past it, a user "
    "arriving behind the backlog waits past the timeout after (timeout - delay) x capacity / "
    "(rate - capacity) seconds. These hold in a steady state only: not in the seconds while "
    "the pool fills, nor once users reload (the rate is then no longer the offered one), nor "
    "for a server that queues inside one busy worker while another has threads free "
    "(Gunicorn's gthread). The edge found: the lowest offered rate whose goodput fell below "
    "95% of it (steps of 5% of the predicted capacity), and the shortest incident delay at "
    "which fewer than 95% of the visits during it were served."
)


def _cliff(run: StoryRun, chart: str | None) -> list[Block]:
    cliff = run.cliff
    if cliff is None:
        return []
    blocks: list[Block] = [
        Heading(2, "The cliff, predicted and found"),
        Paragraph(CLIFF_READING),
        Paragraph(
            f"Rate sweep: the third party at {cliff.delay:g} s, offered "
            f"{', '.join(f'{100 * s:.0f}%' for s in cliff.shares)} of the predicted capacity; "
            f"the incident at {', '.join(f'{d:g}' for d in cliff.delays)} s, at "
            f"{run.story.rate:g} visits/s."
        ),
        Table(CLIFF_COLUMNS, [cliff_row(c) for c in cliff.targets]),
    ]
    if chart:
        blocks.append(Image(chart, "goodput against offered load, the predicted capacity marked"))
    blocks.append(Table(DELAY_COLUMNS, [r for c in cliff.targets for r in delay_rows(c)]))
    blocks += [Paragraph(f"{c.name}: {f.message}") for c in cliff.targets for f in c.findings]
    return blocks


def _errors(run: StoryRun) -> list[str]:
    """Every finding that makes figures untrustworthy, for a callout no reader can miss."""
    out = [f"{t.name}: {f.message}" for t in run.targets for f in t.findings if f.severity == ERROR]
    if run.sweep is not None:
        out += [
            f"{t.name} (sweep): {f.message}"
            for t in run.sweep.targets
            for f in t.findings
            if f.severity == ERROR
        ]
    return out


def _settings(run: StoryRun) -> Paragraph:
    s = run.story
    return Paragraph(
        f"{s.rate:g} visits/s ({s.arrival}, seed {s.seed}) for {s.duration:g} s; the third "
        f"party answers in {s.normal_delay:g} s, then in {s.incident_delay:g} s from second "
        f"{s.before_s:g} for {s.incident_s:g} s, then in {s.normal_delay:g} s again. A user "
        f"gives up after {s.timeout:g} s, waits {s.refresh_delay:g} s and reloads, up to "
        f"{s.max_attempts} attempts. Thread pools: {s.workers} processes x {s.threads} "
        f"threads; gevent: {s.workers} x {s.async_cores}; uWSGI's listen queue {s.listen}."
    )


READING = (
    "Goodput is answers with status 2xx per second. Latency is a user's, from the intended "
    "send of the first attempt to the first success, refreshes included; a user never served "
    "counts with what they had waited when they gave up. Wasted = requests nginx logged as "
    "499 (the client had gone; the app still worked on them). Time to recover: from the end "
    "of the incident until goodput is back to 95% of the answers due (visits arriving, "
    "shifted by the normal latency) over 5 s windows with at most 5% failing, and stays so "
    "until the arrivals stop (whole seconds, counted from the first after the incident). "
    "Verdict: held where at least 95% of the visits during the incident were served; a run "
    "whose load generator did not keep its schedule is marked INVALID and is no headline."
)

CLOSED_READING = (
    "ab's requests/s are the requests it sent in each phase (by their start second, as its "
    "-g file records them); failed and non-2xx are ab's own counts. A closed loop sends its "
    "next request only when one has returned, so it slows down with the server: it reports "
    "'slower', where the open loop's users, who keep arriving, see what the table's right "
    "half shows."
)


def _closed_loop(run: StoryRun) -> list[Block]:
    measured = [t for t in run.targets if t.closed_loop or t.closed_loop_error]
    if not measured:
        return []
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


def _sweep(run: StoryRun, sweep: Sweep, chart: str | None) -> list[Block]:
    s, w = run.story, sweep.settings
    blocks: list[Block] = [
        Heading(2, "Goodput against offered load"),
        Paragraph(
            f"Per target, one step per offered rate ({', '.join(f'{r:g}' for r in w.rates)} "
            f"visits/s, {s.arrival}), the third party at {w.delay:g} s throughout, no "
            f"incident; {w.warmup_s:g} s of warm-up, then {w.measure_s:g} s measured. Users "
            f"as in the story: they give up after {s.timeout:g} s and reload, up to "
            f"{s.max_attempts} attempts. Goodput: 2xx answers per second ending in the window; "
            "offered and attempts: first attempts and all attempts meant to be sent in it; "
            "user latency from the intended send, for the visits arriving in it. A thread "
            "pool's capacity is Little's law: workers x threads / delay."
        ),
    ]
    if chart:
        blocks.append(Image(chart, "goodput against offered load"))
    blocks.append(Table(SWEEP_COLUMNS, sweep_rows(sweep)))
    for m in sweep.targets:
        if m.commands:
            blocks += [
                Paragraph(f"{m.name}, the sweep's commands:"),
                CodeBlock("\n".join(m.commands)),
            ]
    return blocks


def document(
    run: StoryRun,
    target_charts: dict[str, str],
    sweep_chart: str | None,
    cliff_chart: str | None = None,
    overlay: str | None = None,
) -> list[Block]:
    after_s = run.story.after_s
    blocks: list[Block] = [
        Heading(1, "The war story: an incident at the third party, open-loop users"),
        _settings(run),
        Paragraph(READING),
    ]
    if run.finished_at is None:
        blocks.append(Callout("This run did not finish: the targets below are the ones it did."))
    if errors := _errors(run):
        blocks.append(Callout("Not trusted: " + " | ".join(errors)))
    measured = [t for t in run.targets if t.summary or t.error]
    if run.spreads:
        blocks += [
            Heading(2, f"Each target over {run.repeat} repeats"),
            Paragraph(
                "Median (min-max) over the repeats whose figures can be trusted, each on a "
                "fresh bring-up; visits served in %. A verdict marked SPLIT held in some "
                "repeats and collapsed in others: these runs do not settle it."
            ),
            Table(SPREAD_COLUMNS, [spread_row(sp) for sp in run.spreads]),
            *[Paragraph(f"{sp.name}: {f.message}") for sp in run.spreads for f in sp.findings],
            Heading(2, "Every measurement"),
        ]
    if measured:
        blocks.append(Table(COLUMNS, [summary_row(t, after_s, label(t, run)) for t in measured]))
    if overlay:
        blocks.append(Image(overlay, "goodput per second of every target, the incident shaded"))
    blocks += _closed_loop(run)
    if run.sweep is not None:
        blocks += _sweep(run, run.sweep, sweep_chart)
    blocks += _crosschecks(run)
    blocks += _cliff(run, cliff_chart)
    for t in run.targets:
        chart = target_charts.get(label(t, run))
        if chart is None:
            continue
        title = t.title or t.name
        blocks += [
            Heading(2, f"{title}, repeat {t.repeat}" if run.repeat > 1 else title),
            BulletList([f.message for f in t.findings] or ["no findings"]),
            Image(chart, f"{t.name}: goodput, queues and latency per second"),
            CodeBlock("\n".join(t.commands)),
        ]
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
        sweep_chart = charts.SWEEP_CHART
        charts.plot_sweep(run.sweep, run.story, run_dir / sweep_chart)
    overlay = None
    firsts = [t for t in run.targets if t.seconds and t.repeat == 1]
    if len(firsts) > 1:
        overlay = charts.OVERLAY_CHART
        charts.plot_overlay(firsts, run.story, run_dir / overlay)
    cliff_chart = None
    if run.cliff is not None and any(c.rates and c.rates.steps for c in run.cliff.targets):
        cliff_chart = charts.CLIFF_CHART
        charts.plot_sweep(charts.cliff_sweep(run.cliff), run.story, run_dir / cliff_chart)
    blocks = document(run, target_charts, sweep_chart, cliff_chart, overlay)
    names = [
        *([overlay] if overlay else []),
        *target_charts.values(),
        *([sweep_chart] if sweep_chart else []),
        *([cliff_chart] if cliff_chart else []),
    ]
    images = {name: (run_dir / name).read_bytes() for name in names}
    md, page = run_dir / "report.md", run_dir / "report.html"
    md.write_text(render_markdown(blocks), encoding="utf-8", newline="\n")
    page.write_text(
        render_html(blocks, title="The war story", images=images), encoding="utf-8", newline="\n"
    )
    return [md, page, *(run_dir / name for name in names)]


# --- two story runs side by side ------------------------------------------------------------
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
        _f(s.goodput_during if s else None),
        _pct(s.visits_served_during if s else None),
        _recovery(t, run.story.after_s),
        _f(s.amplification if s else None, 2),
        _f(s.user_latency_p99_during if s else None, 1, " s"),
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

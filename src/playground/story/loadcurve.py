"""Goodput against offered load, in the report: the sweep's (`--sweep`) and the cliff's
(`--cliff`) tables, and their chart (a line per target, the ideal diagonal and each thread
pool's capacity)."""

from __future__ import annotations

from pathlib import Path

from matplotlib import pyplot as plt

from playground.report.document import Block, CodeBlock, Heading, Image, Paragraph, Table
from playground.story import findings
from playground.story.cells import DASH, error, num, pct
from playground.story.charts import save
from playground.storymodel import (
    Cliff,
    CliffTarget,
    StoryRun,
    StorySettings,
    Sweep,
    SweepSettings,
    SweepStep,
)

SWEEP_CHART = "story-sweep.png"
CLIFF_CHART = "story-cliff.png"
SWEEP_STYLE = {
    "threads": ("-", "o"),
    "gevent": ("--", "s"),
}

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
            rows.append([m.name, error(m.error), *([DASH] * 9)])
        rows += [_step_row(m.name, st) for st in m.steps]
    return rows


def _step_row(name: str, st: SweepStep) -> list[str]:
    reasons = st.check.reasons if st.check else ["no self-check"]
    return [
        name,
        f"{st.rate:g}",
        num(st.offered_per_s),
        num(st.attempts_per_s),
        num(st.goodput_per_s),
        str(st.timeouts),
        str(st.errors),
        pct(st.visits_served),
        num(st.latency_p50_s, 2, " s"),
        num(st.latency_p99_s, 2, " s"),
        "yes" if st.valid else "no: " + "; ".join(reasons),
    ]


def sweep_blocks(run: StoryRun, sweep: Sweep, chart: str | None) -> list[Block]:
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
        num(p.capacity_per_s if p else None),
        f"{num(c.edge_rate)} | {num(c.held_rate)}",
        _off(c, "capacity"),
        num(p.tipping_delay_s if p else None, 2),
        num(c.edge_delay, 1),
        _off(c, "tipping-delay"),
        num(c.unrecovered_delay, 1),
    ]


def delay_rows(c: CliffTarget) -> list[list[str]]:
    rows = []
    for d in c.delays:
        says = findings.word(d.held)
        rows.append(
            [
                c.name,
                f"{d.incident_delay:g}",
                error(d.error, 60) if d.error else says + ("" if d.trusted else " (INVALID)"),
                pct(d.visits_served_during),
                "not within the run" if d.recovered is False else num(d.recovery_s, 0, " s"),
                f"{num(d.predicted_lasts_s, 1, ' s')} | {num(d.lasted_s, 0, ' s')}",
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


def cliff_blocks(run: StoryRun, cliff: Cliff, chart: str | None) -> list[Block]:
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


def cliff_sweep(cliff: Cliff) -> Sweep:
    """The cliff's rate sweeps as one sweep, to draw like the others: goodput against offered
    load, each pool's predicted capacity marked."""
    steps = [c.rates for c in cliff.targets if c.rates is not None]
    rates = sorted({s.rate for t in steps for s in t.steps}) or [1.0]
    return Sweep(settings=SweepSettings(rates=rates, delay=cliff.delay), targets=steps)


def plot_sweep(sweep: Sweep, settings: StorySettings, path: Path) -> None:
    """Goodput against offered load, a line per target, the ideal diagonal and each thread
    pool's capacity (workers x threads / delay)."""
    fig, ax = plt.subplots(figsize=(9, 6))
    top = max([st.rate for m in sweep.targets for st in m.steps] or [1.0])
    ideal = [0, top * 1.05]
    ax.plot(
        ideal, ideal, color="gray", linestyle=":", linewidth=1, label="ideal: goodput = offered"
    )
    capacities = sorted({m.capacity_per_s for m in sweep.targets if m.capacity_per_s and m.steps})
    for cap in capacities:
        ax.axhline(
            cap,
            color="black",
            linestyle="-.",
            linewidth=1,
            alpha=0.6,
            label=f"thread pool's capacity: {settings.workers} x "
            f"{settings.threads} / {sweep.settings.delay:g} s = {cap:g}/s",
        )
    for m in sweep.targets:
        if not m.steps:
            continue
        style, marker = SWEEP_STYLE.get(m.model, ("-", "o"))
        rates, goodput = [st.rate for st in m.steps], [st.goodput_per_s for st in m.steps]
        ax.plot(rates, goodput, marker=marker, linestyle=style, linewidth=2, label=m.name)
        bad = [st for st in m.steps if not st.valid]
        if bad:
            ax.plot(
                [st.rate for st in bad],
                [st.goodput_per_s for st in bad],
                linestyle="none",
                marker="x",
                color="black",
                markersize=9,
            )
    ax.set_xlim(0, top * 1.05)
    ax.set_ylim(0, top * 1.1)
    ax.set_xlabel("offered load (visits/s, Poisson)")
    ax.set_ylabel("goodput (2xx answers/s, measured window)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(
        f"Goodput vs offered load, third party at {sweep.settings.delay:g} s; users reload "
        f"after {settings.timeout:g} s (x: the generator's self-check failed)",
        fontsize=10,
    )
    save(fig, path)

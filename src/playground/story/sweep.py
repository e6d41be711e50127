"""Goodput against offered load (`playground story --sweep`), measured and shown: per target,
one short step per offered rate on one bring-up, the third party at a fixed delay, no
incident; in the report, a table of the steps and a chart (a line per target, the ideal
diagonal and each thread pool's capacity), which the cliff's rate sweep shares.

Each step is a constant offered rate; the servers drain before it (:func:`.run.settle`). Its
first `warmup_s` seconds fill the servers and are not counted; the figures are over the
measured window after it, by the second each attempt was meant to be sent (offered, attempts)
or ended (goodput, timeouts, errors). A user's latency counts from the intended send of the
first attempt to the first success, refreshes included, for the visits that arrived in the
window; every visit is followed to its end (the generator waits for them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from playground.core.notation import DASH, num, percent
from playground.core.target import Target
from playground.incident.analysis import Attempt, check_adds_up, per_second, percentile, visits_from
from playground.incident.charts import save_story_chart
from playground.incident.openloop import openloop
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import StoryRun, Sweep, SweepStep, SweepTarget
from playground.incident.targetresults import GeneratorCheck
from playground.report.document import Block, CodeBlock, Heading, Image, Paragraph, Table
from playground.story import plan, predicted
from playground.story.cells import error


def step_args(
    s: StorySettings, sweep: SweepSettings, target: Target, *, rate: float, out: str
) -> list[str]:
    """The generator's command line for one step: a constant offered rate, the third party at
    the sweep's delay throughout, the story's users (refreshes included)."""
    url = target.url(delay=sweep.delay)
    return openloop(url, rate=rate, duration=sweep.step_s, options=plan.users(s), out=out)


def summarise_step(
    *,
    attempts: Sequence[Attempt],
    check: GeneratorCheck,
    rate: float,
    warmup_s: float,
    measure_s: float,
    settled_before_s: float | None = 0.0,
) -> SweepStep:
    """The figures of one step over its measured window [warmup_s, warmup_s + measure_s)."""
    end = warmup_s + measure_s
    rows = per_second(attempts, seconds=int(end) + 1)
    window = [r for r in rows if warmup_s <= r.t < end]
    n = len(window) or 1
    visits = [v for v in visits_from(attempts) if warmup_s <= v.start < end]
    latencies = [v.latency for v in visits]
    return SweepStep(
        rate=rate,
        offered_per_s=sum(r.arrivals for r in window) / n,
        attempts_per_s=sum(r.arrivals + r.refreshes for r in window) / n,
        goodput_per_s=sum(r.goodput for r in window) / n,
        timeouts=sum(r.timeouts for r in window),
        errors=sum(r.errors for r in window),
        visits=len(visits),
        visits_served=sum(v.succeeded for v in visits) / len(visits) if visits else None,
        latency_p50_s=percentile(latencies, 50),
        latency_p99_s=percentile(latencies, 99),
        check=check,
        adds_up=check_adds_up(attempts, rows),
        window_s=float(len(window)),
        settled_before_s=settled_before_s,
    )


def named(target: Target) -> SweepTarget:
    """A sweep target with its name and kind of server, before any step."""
    return SweepTarget(
        name=target.name, title=target.title, model=target.model, server=target.server
    )


# --- in the report ---------------------------------------------------------------------------
SWEEP_CHART = "story-sweep.png"
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
        percent(st.visits_served),
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
        blocks.append(Image(chart, "goodput against offered load" + model_note(sweep.targets)))
    blocks.append(Table(SWEEP_COLUMNS, sweep_rows(sweep)))
    blocks += predicted.rate_blocks(sweep.targets, "The sweep")
    for m in sweep.targets:
        if m.commands:
            blocks += [
                Paragraph(f"{m.name}, the sweep's commands:"),
                CodeBlock("\n".join(m.commands)),
            ]
    return blocks


#: The model's line beside a target's measured one: its colour, thinner, dashed, hollow markers.
PREDICTED_LABEL = "predicted (model)"
PREDICTED_STYLE = (0, (5, 3))


def predicted_goodput(m: SweepTarget) -> list[tuple[float, float]]:
    """(offered rate, the model's goodput) for each step the model predicted (`predicted`,
    filled beside a measured run); none for a target the model does not cover, or a run
    stored without the model's figures."""
    return [
        (st.rate, st.predicted.goodput_during)
        for st in m.steps
        if st.predicted is not None
        and st.predicted.error is None
        and st.predicted.goodput_during is not None
    ]


def model_note(targets: Sequence[SweepTarget]) -> str:
    """What a chart's caption adds when it draws the model's line too."""
    drawn = any(predicted_goodput(m) for m in targets)
    return ", the model's prediction of each step dashed" if drawn else ""


def plot_sweep(sweep: Sweep, settings: StorySettings, path: Path) -> None:
    """Goodput against offered load, a line per target, the ideal diagonal and each thread
    pool's capacity (workers x threads / delay); beside a target's line, the model's
    prediction of each step where the run carries it (:mod:`.predicted`), dashed."""
    # A figure of its own, no pyplot state: save_story_chart() draws it on an Agg canvas, deterministically.
    fig = Figure(figsize=(9, 6))
    ax = fig.subplots()
    top = max([st.rate for m in sweep.targets for st in m.steps] or [1.0])
    ideal = [0, top * 1.05]
    ax.plot(
        ideal, ideal, color="gray", linestyle=":", linewidth=1, label="ideal: goodput = offered"
    )
    capacities = sorted({m.capacity_per_s for m in sweep.targets if m.capacity_per_s and m.steps})
    for cap in capacities:
        pool = f"{settings.workers} x {settings.threads} / {sweep.settings.delay:g} s"
        label = f"thread pool's capacity: {pool} = {cap:g}/s"
        ax.axhline(cap, color="black", linestyle="-.", linewidth=1, alpha=0.6, label=label)
    for m in sweep.targets:
        if not m.steps:
            continue
        style, marker = SWEEP_STYLE.get(m.model, ("-", "o"))
        rates, goodput = [st.rate for st in m.steps], [st.goodput_per_s for st in m.steps]
        (line,) = ax.plot(rates, goodput, marker=marker, linestyle=style, linewidth=2, label=m.name)
        if bad := [st for st in m.steps if not st.valid]:
            rates, goodput = [st.rate for st in bad], [st.goodput_per_s for st in bad]
            ax.plot(rates, goodput, linestyle="none", marker="x", color="black", markersize=9)
        if model := predicted_goodput(m):
            rates, goodput = [r for r, _ in model], [g for _, g in model]
            ax.plot(
                rates,
                goodput,
                color=line.get_color(),
                linestyle=PREDICTED_STYLE,
                linewidth=1.5,
                marker="D",
                markersize=5,
                markerfacecolor="none",
                label=f"{m.name}: {PREDICTED_LABEL}",
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
    save_story_chart(fig, path)

"""`playground predict`: the story's incident in the model, in seconds, without Docker.

The same targets and options as `playground story` (:func:`.story.add_story_options`), so a
prediction and a measurement are one word apart; the prediction is stored as a story run
marked `predicted` (`playground report`, `playground compare` read it). `--sweep rate` finds
the offered load at which a target falls, `--sweep delay` the incident's delay, each beside
Little's law.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from functools import partial
from typing import Any

from rich.console import Console
from rich.table import Table

from playground.commands import options
from playground.commands import story as story_command
from playground.core import environment, remedies, runstore
from playground.core.errors import UsageError
from playground.core.runstore import RunStore
from playground.core.target import Target
from playground.incident import capacity, verdict
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import Cliff, CliffTarget, StoryRun, Sweep
from playground.predict import run as model
from playground.predict.system import GTHREAD_BUSIEST_SHARE, system_for
from playground.story import cells, report

#: `--sweep rate`: offered load from 40% to 140% of Little's capacity, in 5% steps.
RATE_SHARES = [round(0.40 + 0.05 * k, 2) for k in range(21)]
#: `--sweep delay`: the incident's delay from half to 1.5 times Little's tipping delay.
DELAY_SHARES = [round(0.5 + 0.1 * k, 1) for k in range(11)]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "predict",
        help="the war story's incident in a model (a discrete-event simulation): the verdict, "
        "table and chart in seconds, without Docker (docs/predict.md)",
        parents=[options.results_dir()],
    )
    story_command.add_story_options(p)
    p.add_argument(
        "--remedies",
        action="store_true",
        help="the remedies table, as `playground story --remedies` measures it",
    )
    p.add_argument(
        "--sweep",
        choices=("rate", "delay"),
        help="find the cliff: offered load at --sweep-delay (40-140%% of Little's capacity), "
        "or the incident's delay at --rate (0.5-1.5 x Little's tipping delay)",
    )
    p.add_argument(
        "--sweep-delay",
        type=options.positive(float),
        default=SweepSettings().delay,
        help=f"the third party's delay throughout --sweep rate (default {SweepSettings().delay:g})",
    )
    p.add_argument(
        "--busiest-share",
        type=float,
        help="the share of new connections the busiest of Gunicorn's workers takes, from 0 to 1 "
        f"(default {GTHREAD_BUSIEST_SHARE:.3f}, measured: docs/predict.md); the kernel's "
        "choice, which a gthread pool's verdict can turn on",
    )
    p.set_defaults(handler=cmd_predict, contenders=False, ab_concurrency=None)


def _targets(args: argparse.Namespace, settings: StorySettings) -> list[Target]:
    targets = story_command.targets_from(args)
    remedies.check_settings(targets, pool=settings.workers * settings.threads)
    for t in targets:
        system_for(t, settings)  # refuses what the model does not cover, before anything runs
    return targets


def _row(t: Any) -> list[str]:
    s = t.summary
    return [
        t.name,
        verdict.outcome(s.visits_served_during, s.recovery_s),
        f"{cells.num(s.goodput_before, 0)} → {cells.num(s.goodput_during, 0)} → "
        f"{cells.num(s.goodput_after, 0)}",
        cells.pct(s.visits_served_during),
        "not within the run" if s.recovery_s is None else f"{s.recovery_s:.0f} s",
        cells.num(s.amplification, 2),
        f"{s.timeouts:,}",
        f"{s.errors:,}",
        f"{s.wasted_499:,} / {s.calls_for_nobody or 0:,} of {s.upstream_calls or 0:,}",
        cells.num(s.peak_in_flight, 0),
    ]


COLUMNS = (
    "target",
    "verdict",
    "goodput/s before → during → after",
    "visits served during",
    "time to recover",
    "attempts/visit",
    "timeouts",
    "errors",
    "499s / calls for nobody",
    "peak in flight",
)


def _sweep_rate(run: StoryRun, targets: list[Target], delay: float, out: Console) -> None:
    sweeps = []
    for t in targets:
        pool = system_for(t, run.story).pool
        rates = [round(share * pool / delay, 1) for share in RATE_SHARES]
        sweep = model.rate_sweep(t, run.story, rates=rates, delay=delay)
        sweeps.append(sweep)
        edge = model.edge_rate(sweep)
        little = capacity.predict(
            workers=1, threads=pool, upstream_s=delay, rate=run.story.rate, timeout_s=1
        ).capacity_per_s
        held = [st.rate for st in sweep.steps if edge is None or st.rate < edge]
        fell = "none in the sweep" if edge is None else f"{edge:g} visits/s"
        fell += f" (held at {max(held):g})" if held else " (the sweep's lowest rate)"
        out.print(
            f"{t.name}: falls at {fell}; Little's law: {pool} / {delay:g} s = {little:.1f}/s, "
            f"a fall below {verdict.HELD_SHARE:.0%} of the offered from {little / verdict.HELD_SHARE:.1f}/s"
        )
    run.sweep = Sweep(
        settings=SweepSettings(rates=[step.rate for step in sweeps[0].steps], delay=delay),
        targets=sweeps,
    )


def _sweep_delay(run: StoryRun, targets: list[Target], out: Console) -> None:
    s = run.story
    cliff = Cliff(delay=s.incident_delay, targets=[])
    for t in targets:
        pool = system_for(t, s).pool
        tipping = pool / s.rate
        delays = sorted({round(max(s.normal_delay + 0.1, f * tipping), 2) for f in DELAY_SHARES})
        steps = model.each(partial(model.delay_step, t, s), delays)
        edge = next((d.incident_delay for d in steps if d.held is False), None)
        lost = next((d.incident_delay for d in steps if d.recovered is False), None)
        cliff.delays = delays
        cliff.targets.append(
            CliffTarget(
                name=t.name, title=t.title, delays=steps, edge_delay=edge, unrecovered_delay=lost
            )
        )
        out.print(
            f"{t.name}: collapses from {'-' if edge is None else f'{edge:g} s'}, does not recover "
            f"from {'-' if lost is None else f'{lost:g} s'}; Little's law: {pool} / {s.rate:g} "
            f"= {tipping:.2f} s fills the pool (a steady state without reloads)"
        )
    run.cliff = cliff


def cmd_predict(args: argparse.Namespace, out: Console, err: Console) -> int:
    settings = replace(story_command.settings_from(args), busiest_share=args.busiest_share)
    targets = _targets(args, settings)
    if args.sweep and args.remedies:
        raise UsageError("--sweep finds one target's cliff; leave out --remedies")
    run = StoryRun(
        run_id=runstore.new_run_id() + "-predict",
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        command=args.command_line,
        environment=environment.model_only(),
        story=settings,
        predicted=True,
    )
    started = time.monotonic()
    if args.sweep == "rate":
        _sweep_rate(run, targets, args.sweep_delay, out)
    elif args.sweep == "delay":
        _sweep_delay(run, targets, out)
    else:
        run.targets = model.each(partial(model.predict_target, settings=settings), targets)
        table = Table(
            title=f"predicted: {settings.rate:g} visits/s, third party "
            f"{settings.normal_delay:g} → {settings.incident_delay:g} s for {settings.incident_s:g} s"
        )
        for col in COLUMNS:
            table.add_column(col, overflow="fold")
        for t in run.targets:
            table.add_row(*_row(t))
        out.print(table)
    out.print(f"modelled in {time.monotonic() - started:.1f} s")
    run.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    store = RunStore.create_run(results_dir=args.results_dir, run=run)
    store.save_run(run)
    paths = report.write_report(run_dir=store.run_dir, run=run)
    out.print(f"results: {store.path}")
    out.print(f"         {paths[0]}")
    return 0

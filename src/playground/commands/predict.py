"""`playground predict`: the story's incident in the model, in seconds, without Docker.

The same targets and options as `playground story` (:func:`.story.add_story_options`), so a
prediction and a measurement are one word apart; the prediction is stored as a story run of
kind `predict` (`playground report`, `playground compare` read it). `--sweep rate` finds
the offered load at which a target falls, `--sweep delay` the incident's delay, each beside
Little's law.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from functools import partial
from typing import Any

from rich.console import Console

from playground.commands import options
from playground.commands import story as story_command
from playground.core import environment, jsonmodel, remedies, runstore
from playground.core.errors import UsageError
from playground.core.notation import percent
from playground.core.odds import Frequency
from playground.core.runstore import RunStore
from playground.core.target import Target
from playground.incident import capacity, edge, edgescore, held, runrecords
from playground.incident.oddsresults import Odds, recovery_text, share_range, threshold_text
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import Cliff, CliffTarget, StoryRun, Sweep
from playground.predict import draws as odds
from playground.predict import oddsmap
from playground.predict import run as model
from playground.predict.system import GTHREAD_BUSIEST_SHARE, system_for
from playground.story import cells, report

#: `--sweep rate`: offered load from 40% to 140% of Little's capacity, in 5% steps.
RATE_SHARES = [round(0.40 + 0.05 * k, 2) for k in range(21)]
#: `--sweep delay`: the incident's delay from half to 1.5 times Little's tipping delay.
DELAY_SHARES = [round(0.5 + 0.1 * k, 1) for k in range(11)]
#: Draws per target: enough for a half-width of at most 0.1 at 95 % whatever the probability
#: (1.96^2 x 0.25 / 0.1^2 = 96.04, and Wilson's interval is narrower at the centre).
DRAWS = 96
#: Draws per cell of `--map`.
MAP_DRAWS = 8


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
        help="the share of new connections the busiest of Gunicorn's workers takes, from 0 to 1, "
        "in every draw (default: each draw its own, from the measured shares, "
        "playground.predict.measured; --sweep: the count by hand, "
        f"{GTHREAD_BUSIEST_SHARE:.3f}); the kernel's choice, which a gthread pool's verdict "
        "can turn on",
    )
    p.add_argument(
        "--system-seed",
        type=int,
        help="seed of what the model draws inside the servers, apart from the arrivals' "
        "(--seed); each draw adds its index (default: --seed)",
    )
    p.add_argument(
        "--draws",
        type=int,
        help=f"simulated repeats per target (default {DRAWS}) or per cell of --map "
        f"(default {MAP_DRAWS}); each its own system seed and busiest share",
    )
    _add_map_options(p)
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="processes the draws, a map's rows and a sweep's steps are spread over (default "
        "%(default)s, one per core); the figures are the same whatever the number",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document, for scripts")
    p.set_defaults(handler=cmd_predict, contenders=False, ab_concurrency=None)


def _add_map_options(p: Any) -> None:
    """`--map` and the grid it covers."""
    p.add_argument(
        "--map",
        action="store_true",
        help="P(collapse) over arrival rate x the incident's delay for one target: a chart "
        "with its 10/50/90%% contours, Little's law and the measured runs",
    )
    p.add_argument(
        "--map-rates", metavar="LO:HI", help="the map's rates (default 0.5-1.5 x --rate)"
    )
    p.add_argument(
        "--map-delays",
        metavar="LO:HI",
        help="the map's incident delays, s (default 0.5-1.5 x the tipping delay pool / rate)",
    )
    p.add_argument(
        "--map-cells", type=int, default=oddsmap.CELLS, help="cells per axis (default %(default)s)"
    )
    p.add_argument(
        "--map-incident-s",
        type=float,
        help="the incident's duration on the map (default: --incident-s)",
    )


def _targets(args: argparse.Namespace, settings: StorySettings) -> list[Target]:
    targets = story_command.targets_from(args)
    remedies.check_settings(targets, pool=settings.workers * settings.threads)
    for t in targets:
        system_for(t, settings)  # refuses what the model does not cover, before anything runs
    return targets


def _sweep_rate(
    run: StoryRun, targets: list[Target], delay: float, jobs: int, out: Console
) -> None:
    sweeps = []
    for t in targets:
        pool = system_for(t, run.story).pool
        rates = [round(share * pool / delay, 1) for share in RATE_SHARES]
        sweep = model.rate_sweep(t, run.story, rates=rates, delay=delay, jobs=jobs)
        sweeps.append(sweep)
        edge = model.edge_rate(sweep)
        little = capacity.predict(
            workers=1, threads=pool, upstream_s=delay, rate=run.story.rate, timeout_s=1
        ).capacity_per_s
        held_at = [st.rate for st in sweep.steps if edge is None or st.rate < edge]
        fell = "none in the sweep" if edge is None else f"{edge:g} visits/s"
        fell += f" (held at {max(held_at):g})" if held_at else " (the sweep's lowest rate)"
        out.print(
            f"{t.name}: falls at {fell}; Little's law: {pool} / {delay:g} s = {little:.1f}/s, "
            f"a fall below {held.HELD_SHARE:.0%} of the offered from {little / held.HELD_SHARE:.1f}/s"
        )
    run.sweep = Sweep(
        settings=SweepSettings(rates=[step.rate for step in sweeps[0].steps], delay=delay),
        targets=sweeps,
    )


def _sweep_delay(run: StoryRun, targets: list[Target], jobs: int, out: Console) -> None:
    s = run.story
    cliff = Cliff(delay=s.incident_delay, targets=[])
    for t in targets:
        pool = system_for(t, s).pool
        tipping = pool / s.rate
        delays = sorted({round(max(s.normal_delay + 0.1, f * tipping), 2) for f in DELAY_SHARES})
        steps = model.each(partial(model.delay_step, t, s), delays, jobs=jobs)
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


def _range(text: str | None, name: str, default: tuple[float, float]) -> tuple[float, float]:
    """`LO:HI` as two numbers above 0, LO at most HI."""
    if text is None:
        return default
    lo, sep, hi = text.partition(":")
    try:
        low, high = float(lo), float(hi if sep else lo)
    except ValueError:
        raise UsageError(f"{name} takes LO:HI, two numbers, got {text!r}") from None
    if not (0 < low <= high < float("inf")):
        raise UsageError(f"{name} must run from above 0 up (LO:HI, LO <= HI), got {text!r}")
    return low, high


def _frequencies(o: Odds) -> dict[str, Any]:
    return {
        word: {"k": f.k, "n": f.n, "p": f.share, "low": f.interval[0], "high": f.interval[1]}
        for word in (held.HELD, held.COLLAPSED, held.NOT_RECOVERED)
        for f in (o.frequency(word),)
    }


def odds_lines(name: str, o: Odds, *, share_rule: bool = True) -> list[str]:
    """A target's probabilities, P(collapse) first, each line under 80 columns; the busiest
    share's rule only where `share_rule` (measured repeats back it: :func:`edge.share_predicts`)."""
    n = len(o.draws)
    collapsed = o.frequency(held.COLLAPSED).k + o.frequency(held.NOT_RECOVERED).k
    p = Frequency(collapsed, n)
    low, high = p.interval
    lines = [
        f"{name}: P(collapse) {p.share:.2f}",
        f"  {collapsed} of {n} draws; the draws' 95 % interval {100 * low:.0f}-{100 * high:.0f} %",
        "  (it covers the model's own draws, not its error against measurement;",
    ]
    error = edgescore.error_lines(name.removeprefix("story-")) or [SCORED_TEXT]
    lines += [f"  {e}" for e in error[:-1]] + [f"  {error[-1]})"]
    for word, label in (
        (held.HELD, "P(held)"),
        (held.COLLAPSED, "P(collapsed, recovered)"),
        (held.NOT_RECOVERED, "P(not recovered)"),
    ):
        f = o.frequency(word)
        lines.append(f"  {label:<24} {f.share:4.2f}   {f.text()}")
    lines.append(f"  {recovery_text(o)}")
    how = (
        "the busiest share pinned (--busiest-share)"
        if o.share_pinned
        else f"the busiest share drawn from the measured {share_range(o.measured_shares)}"
        if any(d.share is not None for d in o.draws)
        else "each its own system seed"
    )
    lines.append(f"  {how}")
    if share_rule and (sentence := threshold_text(o)) is not None:
        lines += [f"  {part}" for part in sentence.split("; ")]
    return lines


#: What the command can say of the model's error near the edge: the page scores it
#: (docs/predict.md, "Scored where a pool tips") on repeats measured after the model's commit.
SCORED_TEXT = "docs/predict.md scores its error where a pool tips"


def _incident(
    run: StoryRun, targets: list[Target], draws: int, args: argparse.Namespace, out: Console
) -> None:
    settings = run.story
    run.targets = [odds.predict_odds(t, settings, draws=draws, jobs=args.jobs) for t in targets]
    if args.json:
        return
    out.print(
        f"{settings.rate:g} visits/s, the third party {settings.normal_delay:g} s, "
        f"{settings.incident_delay:g} s for {settings.incident_s:g} s; {draws} draws a target",
        highlight=False,
    )
    rule = edge.share_predicts(runrecords.load_all())
    for t in run.targets:
        assert t.odds is not None
        for line in odds_lines(t.name, t.odds, share_rule=rule):
            out.print(line, highlight=False)
        for line in _representative(t):
            out.print(line, highlight=False)


def _representative(t: Any) -> list[str]:
    """The one draw the report's rows and charts show, in two lines."""
    s = t.summary
    recovery = "past the run" if s.recovery_s is None else f"{s.recovery_s:.0f} s"
    return [
        f"  the report's draw: {held.outcome(s.visits_served_during, s.recovery_s)}, "
        f"{percent(s.visits_served_during)} of the visits served,",
        f"  goodput/s {cells.num(s.goodput_before, 0)} → {cells.num(s.goodput_during, 0)} → "
        f"{cells.num(s.goodput_after, 0)}, {cells.num(s.amplification, 2)} attempts a visit, "
        f"time to recover {recovery}",
    ]


def _map(
    run: StoryRun, targets: list[Target], draws: int, args: argparse.Namespace, out: Console
) -> None:
    if len(targets) != 1 or args.sweep or args.remedies:
        raise UsageError(
            "--map draws one target's map: name one target, without --sweep or --remedies"
        )
    (target,) = targets
    settings = run.story
    if args.map_incident_s is not None:
        settings = replace(settings, incident_s=args.map_incident_s)
        run.story = settings
    pool = system_for(target, settings).pool
    rates, delays = oddsmap.default_ranges(pool, settings)
    grid_rates = oddsmap.grid(*_range(args.map_rates, "--map-rates", rates), args.map_cells)
    grid_delays = oddsmap.grid(*_range(args.map_delays, "--map-delays", delays), args.map_cells)
    for d in grid_delays:
        replace(settings, incident_delay=d)  # refuses a delay no incident can have, up front
    run.odds_map = oddsmap.predict_map(
        target,
        settings,
        rates=grid_rates,
        delays=grid_delays,
        draws=draws,
        results_dir=args.results_dir,
        jobs=args.jobs,
    )
    if args.json:
        return
    for d in grid_delays:
        row = [c for c in run.odds_map.cells if c.delay == d]
        half = next((c.rate for c in row if c.p >= 0.5), None)
        edge = "none on the map" if half is None else f"{half:g}/s"
        out.print(f"delay {d:g} s: P(collapse) >= 1/2 from {edge}; Little's law {pool / d:.1f}/s")
    points = run.odds_map.measured
    out.print(f"measured runs on the map: {len(points) or 'none found'}")


def _json(run: StoryRun) -> str:
    doc: dict[str, Any] = {"run_id": run.run_id, "targets": []}
    for t in run.targets:
        if t.odds is not None:
            doc["targets"].append(
                {
                    "name": t.name,
                    "probabilities": _frequencies(t.odds),
                    "recovery_s": {str(q): t.odds.recovery_quantile(q) for q in (0.5, 0.9)},
                    "odds": jsonmodel.to_json(t.odds),
                }
            )
    if run.odds_map is not None:
        doc["map"] = jsonmodel.to_json(run.odds_map)
    return json.dumps(doc)


def cmd_predict(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if args.draws is not None and args.draws < 1:
        raise UsageError(f"--draws must be at least 1, got {args.draws}")
    if args.map and args.map_cells < 1:
        raise UsageError(
            f"a map needs at least one cell per axis, got --map-cells {args.map_cells}"
        )
    settings = replace(
        story_command.settings_from(args),
        busiest_share=args.busiest_share,
        system_seed=args.system_seed,
    )
    targets = _targets(args, settings)
    if args.sweep and args.remedies:
        raise UsageError("--sweep finds one target's cliff; leave out --remedies")
    run = StoryRun(
        run_id=runstore.new_run_id() + "-predict",
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        command=args.command_line,
        environment=environment.model_only(),
        story=settings,
        kind="predict",
    )
    started = time.monotonic()
    shown = Console(quiet=True) if args.json else out  # --json: the document alone on stdout
    if args.map:
        _map(run, targets, args.draws or MAP_DRAWS, args, out)
    elif args.sweep == "rate":
        _sweep_rate(run, targets, args.sweep_delay, args.jobs, shown)
    elif args.sweep == "delay":
        _sweep_delay(run, targets, args.jobs, shown)
    else:
        _incident(run, targets, args.draws or DRAWS, args, out)
    run.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    store = RunStore.create_run(results_dir=args.results_dir, run=run)
    store.save_run(run)
    paths = report.write_report(run_dir=store.run_dir, run=run)
    if args.json:
        sys.stdout.write(_json(run) + "\n")
        return 0
    out.print(f"modelled in {time.monotonic() - started:.1f} s")
    out.print(f"results: {store.path}")
    out.print(f"         {paths[0]}")
    return 0

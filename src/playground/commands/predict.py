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
from typing import Any

from rich.console import Console

from playground.commands import options
from playground.commands import story as story_command
from playground.core import environment, remedies, runstore
from playground.core.errors import UsageError
from playground.core.runstore import RunStore
from playground.core.target import Target
from playground.incident import edge, runrecords
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import StoryRun
from playground.predict import draws as odds
from playground.predict import machinesplit, oddsmap, oddstext, tipping
from playground.predict.system import GTHREAD_BUSIEST_SHARE, system_for
from playground.story import report

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
    _add_draw_options(p)
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


def _add_draw_options(p: Any) -> None:
    """What the draws take inside the servers: the busiest share and the system seed."""
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
        "--shares-from",
        metavar="RUN",
        help="draw the busiest shares from a story run measured on the machine the "
        "prediction is for (a record's id under docs/runs, or a run under the results "
        "folder: id, path or latest), where the default draws the fit run's; its repeats "
        "fit the prediction, so they cannot score it",
    )
    p.add_argument(
        "--system-seed",
        type=int,
        help="seed of what the model draws inside the servers, apart from the arrivals' "
        "(--seed); each draw adds its index (default: --seed)",
    )


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


def _range(text: str, name: str) -> tuple[float, float]:
    """`LO:HI` as two numbers above 0, LO at most HI."""
    lo, sep, hi = text.partition(":")
    try:
        low, high = float(lo), float(hi if sep else lo)
    except ValueError:
        raise UsageError(f"{name} takes LO:HI, two numbers, got {text!r}") from None
    if not (0 < low <= high < float("inf")):
        raise UsageError(f"{name} must run from above 0 up (LO:HI, LO <= HI), got {text!r}")
    return low, high


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
        lines = oddstext.odds_lines(t.name, t.odds, share_rule=rule)
        for line in lines + oddstext.representative_lines(t):
            out.print(line, highlight=False)


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
    run.odds_map, lines = oddsmap.map_of(
        target,
        settings,
        rates=None if args.map_rates is None else _range(args.map_rates, "--map-rates"),
        delays=None if args.map_delays is None else _range(args.map_delays, "--map-delays"),
        cells=args.map_cells,
        draws=draws,
        results_dir=args.results_dir,
        jobs=args.jobs,
    )
    if not args.json:
        _print(out, lines)


def _print(out: Console, lines: list[str]) -> None:
    for line in lines:
        out.print(line)


def _settings(args: argparse.Namespace) -> StorySettings:
    """The story's settings with the model's own: the busiest share pinned, or the shares
    drawn from a run on this machine, and the system seed."""
    if args.shares_from is not None and args.busiest_share is not None:
        raise UsageError("--busiest-share pins the share that --shares-from draws: give one")
    return replace(
        story_command.settings_from(args),
        busiest_share=args.busiest_share,
        shares_from=()
        if args.shares_from is None
        else machinesplit.load(args.shares_from, args.results_dir),
        system_seed=args.system_seed,
    )


def cmd_predict(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if args.draws is not None and args.draws < 1:
        raise UsageError(f"--draws must be at least 1, got {args.draws}")
    if args.map and args.map_cells < 1:
        raise UsageError(
            f"a map needs at least one cell per axis, got --map-cells {args.map_cells}"
        )
    settings = _settings(args)
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
        run.sweep, lines = tipping.rate_sweep(
            targets, settings, delay=args.sweep_delay, jobs=args.jobs
        )
        _print(shown, lines)
    elif args.sweep == "delay":
        run.cliff, lines = tipping.delay_cliff(targets, settings, jobs=args.jobs)
        _print(shown, lines)
    else:
        _incident(run, targets, args.draws or DRAWS, args, out)
    run.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    store = RunStore.create_run(results_dir=args.results_dir, run=run)
    store.save_run(run)
    paths = report.write_report(run_dir=store.run_dir, run=run)
    if args.json:
        sys.stdout.write(json.dumps(oddstext.json_document(run)) + "\n")
        return 0
    out.print(f"modelled in {time.monotonic() - started:.1f} s")
    out.print(f"results: {store.path}")
    out.print(f"         {paths[0]}")
    return 0

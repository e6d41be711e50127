"""`playground story`: the war story's targets through one incident at the third party.

The path of an option, from here to the chart: this module turns the options into the
settings (:mod:`playground.incident.settings`) and the registry's targets, takes the machine for
every bring-up (:mod:`.session`), and hands both to the part that measures:
:mod:`playground.story.run` the incident, :mod:`playground.story.sweep` the sweep,
:mod:`playground.story.cliff` and :mod:`playground.story.crosscheck` theirs, each into a
results.json like every run's; :func:`playground.story.report.write_report` then draws the
report, each part's section and chart coming from the part's own module.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from playground.commands import options, outside
from playground.commands.session import build, session
from playground.commands.storyoutcome import new_story_run, print_outcome
from playground.core import remedies
from playground.core.compose import STORY_LOADGEN_SERVICES
from playground.core.jsonmodel import field_doc
from playground.core.runstore import RunStore
from playground.core.scenarios import (
    STORY_CONTENDERS,
    remedies_table,
    resolve_story,
    story_targets,
)
from playground.core.target import Target
from playground.incident.settings import StoryError, StorySettings, SweepSettings
from playground.predict import beside
from playground.story import report
from playground.story.crosscheck import OHA_COMPOSE
from playground.story.parts import Parts, measure
from playground.story.run import RunInProgress, expected_seconds

DEFAULTS = StorySettings()
SWEEP = SweepSettings()


def _number(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None

    return parse


def _rates(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected rates like 20,40,60, got {text!r}") from None


# The settings a flag sets: (flag, StorySettings field, type); each flag's help is the field's
# description (incident/settings.py), so the command line and the schema page say the same.
STORY_FLAGS: tuple[tuple[str, str, Callable[[str], Any]], ...] = (
    ("--rate", "rate", float),
    ("--normal-delay", "normal_delay", float),
    ("--incident-delay", "incident_delay", float),
    ("--before", "before_s", float),
    ("--incident", "incident_s", float),
    ("--after", "after_s", float),
    ("--timeout", "timeout", float),
    ("--refresh-delay", "refresh_delay", float),
    ("--refresh-backoff", "refresh_backoff", float),
    ("--max-attempts", "max_attempts", int),
    ("--seed", "seed", int),
    ("--workers", "workers", int),
    ("--threads", "threads", int),
    ("--async-cores", "async_cores", int),
    ("--listen", "listen", int),
)
# The sweep's: (flag, SweepSettings field), the help likewise its field's description.
SWEEP_FLAGS: tuple[tuple[str, str], ...] = (
    ("--sweep-delay", "delay"),
    ("--sweep-warmup", "warmup_s"),
    ("--sweep-measure", "measure_s"),
    ("--sweep-settle", "settle_s"),
)


def _help(cls: type, attr: str, default: str) -> str:
    """A settings field's description as a flag's help (without the schema page's Markdown
    quotes), with the default."""
    text = field_doc(cls, attr).replace("`", "")
    return f"{text} (default {default})".replace("%", "%%")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "story",
        help="the war story: open-loop users through an incident at the third party, "
        "thread pools against gevent (docs/story.md)",
        parents=[options.session()],
    )
    add_story_options(p)
    # In the order `--help` shows them.
    _add_companions(p)
    _add_target_sets(p)
    _add_sweep_and_repeats(p)


def _switch(p: argparse.ArgumentParser, flag: str, text: str) -> None:
    p.add_argument(flag, action="store_true", help=text)


def _add_companions(p: argparse.ArgumentParser) -> None:
    """The measurements beside the incident: ab's closed loop, the sweep, the cross-check."""
    d = DEFAULTS
    p.add_argument(
        "--ab-concurrency",
        type=_number(int),
        default=None,
        help="ab's connections for --closed-loop (default: rate x normal delay, "
        f"{d.closed_loop_concurrency})",
    )
    _switch(p, "--closed-loop", "also drive the same incident with ab (a closed loop), per target")
    _switch(
        p,
        "--sweep",
        "also sweep goodput against offered load per target, the third party "
        "at a fixed delay (--sweep-*)",
    )
    _switch(
        p,
        "--cross-check",
        "also check the generator against oha (an independent open-loop tool) per "
        "target: the same constant rates, below, at and above the thread pool's capacity at "
        "--cross-check-delay; builds oha's image first (several minutes the first time)",
    )
    p.add_argument(
        "--cross-check-delay",
        type=options.positive(float),
        default=2.0,
        help="the third party's delay during the cross-check (default 2)",
    )
    p.add_argument(
        "--cross-check-duration",
        type=options.positive(float),
        default=30.0,
        help="seconds of load per tool and rate in the cross-check (default 30)",
    )


def _add_target_sets(p: argparse.ArgumentParser) -> None:
    """The contenders, the remedies, the cliff, and the incident left out."""
    _switch(
        p,
        "--contenders",
        "the 2026 contenders through the incident, behind the same nginx at the same "
        "scale (Granian, with its backpressure too, Uvicorn + a2wsgi, Flask async views, Quart, "
        "free-threaded gthread), after Gunicorn's gthread and gevent",
    )
    _switch(
        p,
        "--remedies",
        "the remedies table: for each thread-pool target named (default: "
        "gunicorn-threads, which collapses at the story's defaults), the pool as it is, gevent "
        "on the same server, then every remedy that fits it, through the same incident",
    )
    _switch(
        p,
        "--cliff",
        "also find each thread pool's cliff against Little's law's prediction: a sweep "
        "of offered load from 80%% to 120%% of the predicted capacity in 5%% steps at "
        "--cliff-delay, then the incident at delays 1.8 to 2.8 s (long: about 20 minutes a "
        "thread pool)",
    )
    p.add_argument(
        "--cliff-delay",
        type=options.positive(float),
        default=2.0,
        help="the third party's delay during the cliff's rate sweep (default 2)",
    )
    _switch(
        p,
        "--no-incident",
        "leave out the open-loop incident (run only --closed-loop/--sweep/--cross-check)",
    )


def _add_sweep_and_repeats(p: argparse.ArgumentParser) -> None:
    """The sweep's steps, the repeats and the generator's engine."""
    w = SWEEP
    p.add_argument(
        "--sweep-rates",
        type=_rates,
        default=w.rates,
        help=_help(SweepSettings, "rates", ",".join(f"{r:g}" for r in w.rates)),
    )
    for flag, attr in SWEEP_FLAGS:
        p.add_argument(
            flag,
            dest="sweep_" + attr,
            type=_number(float),
            default=getattr(w, attr),
            help=_help(SweepSettings, attr, f"{getattr(w, attr):g}"),
        )
    p.add_argument(
        "--repeat",
        type=options.positive(int),
        default=1,
        help="measure each target N times, each on a fresh bring-up; the report gives each "
        "headline figure as median and min-max (default 1)",
    )
    p.add_argument(
        "--settle",
        type=options.positive(int),
        metavar="M",
        help="with --repeat N: stop repeating a target once at least M trusted repeats put the "
        "95 %% interval of its collapses wholly above or below a half (N is then the most)",
    )
    p.add_argument(
        "--engine",
        choices=("tokio", "asyncio"),
        default=DEFAULTS.engine,
        help=_help(StorySettings, "engine", DEFAULTS.engine),
    )
    outside.add_arguments(p)
    p.set_defaults(handler=cmd_story)


def add_story_options(p: argparse.ArgumentParser) -> None:
    """The targets and the story's settings (rate, pools, incident, users), as `playground
    story` and `playground predict` both take them."""
    names = ", ".join(t.name.removeprefix("story-") for t in story_targets())
    p.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help=f"targets to run: {names} (default: those four); a remedy layered on a thread "
        f"pool: TARGET+REMEDY, remedies {', '.join(remedies.BY_NAME)} (docs/story.md)",
    )
    d = DEFAULTS
    for flag, attr, kind in STORY_FLAGS:
        p.add_argument(
            flag,
            dest=attr,
            type=_number(kind),
            default=getattr(d, attr),
            help=_help(StorySettings, attr, str(getattr(d, attr))),
        )
    p.add_argument(
        "--arrival",
        choices=("poisson", "constant"),
        default=d.arrival,
        help=_help(StorySettings, "arrival", d.arrival),
    )
    p.add_argument("--no-refresh", action="store_true", help="users never reload")


def settings_from(args: argparse.Namespace) -> StorySettings:
    values = {attr: getattr(args, attr) for _, attr, _ in STORY_FLAGS}
    values.update(
        arrival=args.arrival,
        ab_concurrency=args.ab_concurrency,
        # playground predict takes the story's settings without a sender to choose.
        engine=getattr(args, "engine", DEFAULTS.engine),
    )
    if args.no_refresh:
        values["max_attempts"] = 1
    return StorySettings(**values)


def sweep_from(args: argparse.Namespace) -> SweepSettings:
    return SweepSettings(
        rates=list(args.sweep_rates), **{a: getattr(args, "sweep_" + a) for _, a in SWEEP_FLAGS}
    )


def targets_from(args: argparse.Namespace) -> list[Target]:
    """The targets named, with the contenders or the remedies added where asked."""
    targets = resolve_story(args.targets)
    if args.contenders:
        named = targets if args.targets else []
        baseline = resolve_story(["gunicorn-threads", "gunicorn-gevent"])
        targets = list(dict.fromkeys([*baseline, *STORY_CONTENDERS, *named]))
    if args.remedies:
        targets = remedies_table(targets if args.targets else resolve_story(["gunicorn-threads"]))
    return targets


def _refuse(args: argparse.Namespace, targets: list[Target], settings: StorySettings) -> None:
    """A story no run can make, refused before Docker is touched."""
    remedies.check_settings(targets, pool=settings.workers * settings.threads)
    if args.no_incident and not (args.closed_loop or args.sweep or args.cross_check or args.cliff):
        raise StoryError(
            "--no-incident leaves nothing to run: add --closed-loop, --sweep, --cross-check "
            "or --cliff"
        )
    if args.cliff and not any(t.model == "threads" for t in targets):
        raise StoryError("--cliff finds a thread pool's edge: name at least one thread-pool target")
    if args.settle is not None and not 1 < args.settle <= args.repeat:
        raise StoryError(
            f"--settle {args.settle} needs --repeat N of at least {max(2, args.settle)}: it stops "
            "a target's repeats early, so it needs more than one and at most N"
        )


def _expected(
    args: argparse.Namespace,
    targets: list[Target],
    measurements: int,
    seconds: float,
    *,
    later: bool,
) -> str:
    """What the run is about to measure, and about how long it takes."""
    return (
        f"{measurements} measurements through the incident ({', '.join(t.name for t in targets)}): "
        f"about {seconds / 60:.0f} minutes"
        + (f" at most (--settle {args.settle} may stop a target early)" if args.settle else "")
        + (" before the sweep, cross-check or cliff" if later else "")
    )


def _progress(out: Console, *, quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        disable=quiet,
    )


def parts_from(args: argparse.Namespace) -> Parts:
    return Parts(
        incident=not args.no_incident,
        closed_loop=args.closed_loop,
        sweep=sweep_from(args) if args.sweep else None,
        cliff_delay=args.cliff_delay if args.cliff else None,
        cross_check=(
            (args.cross_check_delay, args.cross_check_duration) if args.cross_check else None
        ),
    )


def cmd_story(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.url is not None:
        return outside.cmd_outside(args, settings_from(args), out, err)
    # Everything a reader can get wrong is refused here, before Docker is touched.
    targets = targets_from(args)
    settings = settings_from(args)
    _refuse(args, targets, settings)
    parts = parts_from(args)
    with session(args, out) as docker:
        docker.env.update(settings.compose_env())
        files = [t.compose_file for t in targets] + ([OHA_COMPOSE] if args.cross_check else [])
        build(
            docker,
            [*files, *remedies.own_images(targets)],
            args=args,
            out=out,
            generators=STORY_LOADGEN_SERVICES,
        )
        run = new_story_run(args, docker, settings, repeat=args.repeat)
        measurements = len(targets) * args.repeat if not args.no_incident or args.closed_loop else 0
        seconds = expected_seconds(
            settings,
            targets=measurements,
            closed_loop=args.closed_loop,
            incident=not args.no_incident,
        )
        out.print(_expected(args, targets, measurements, seconds, later=parts.later))
        bar = _progress(out, quiet=args.quiet)
        task = bar.add_task("story", total=measurements or None)
        story = RunInProgress(
            run=run,
            store=RunStore.create_run(results_dir=args.results_dir, run=run),
            docker=docker,
            info=(lambda line: None) if args.quiet else bar.console.print,
            warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False),
            done=lambda name: bar.advance(task),
            wait_timeout_s=args.wait_timeout,
        )
        bar.start()
        try:
            measure(story, targets, parts)
        except KeyboardInterrupt:
            bar.stop()
            paths = report.write_report(run_dir=story.store.run_dir, run=run)
            err.print(
                f"\ninterrupted: every container is down; the finished targets are in "
                f"{story.store.path} and {paths[0]}"
            )
            return 130
        bar.stop()
        run.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        beside.attach(run)  # the model's figures beside each measured target
        story.save()
        paths = report.write_report(run_dir=story.store.run_dir, run=run)
    return print_outcome(run, results=story.store.path, paths=paths, out=out, err=err)

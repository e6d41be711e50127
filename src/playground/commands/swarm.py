"""`playground swarm`: the war story's incident on a Docker Swarm stack made from the same
compose files, the app replicated, the load from several senders (docs/cluster.md).

A command of its own rather than `story --swarm`: its life is another engine's (swarm mode, a
registry, a stack, sender services, all removed afterwards), and most of the story's other
options (--closed-loop, --sweep, --cliff, --cross-check, --url) have no meaning on it; it
takes the story's targets and incident options as they are. What it measures is a story run
(`kind: story`, each target with its `swarm`), so its report is the story's, redrawn by
`playground report` like any other.
"""

from __future__ import annotations

import argparse
import time
from contextlib import ExitStack

from rich.console import Console

from playground.commands import options
from playground.commands.options import Subparsers
from playground.commands.session import session
from playground.commands.story import add_story_options, settings_from
from playground.commands.storyoutcome import new_story_run, print_outcome
from playground.core import remedies
from playground.core.runstore import RunStore
from playground.core.scenarios import resolve_story
from playground.incident.analysis import GeneratorOutput
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryTarget
from playground.story import findings, repeats, report
from playground.story.run import measure_incident
from playground.swarm import engines
from playground.swarm.engine import SwarmRun
from playground.swarm.live import (
    require_registry,
)
from playground.swarm.rounds import Reading, measure_all
from playground.swarm.settings import LOCAL_REGISTRY, loss_plan, swarm_settings

#: Without targets named: the thread pool that collapses and gevent, as in the story.
DEFAULT_TARGETS = ["gunicorn-threads", "gunicorn-gevent"]


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "swarm",
        help="the war story's incident on a Docker Swarm stack from the same compose files: "
        "the app replicated, several senders merged into one run (docs/cluster.md)",
        parents=[options.session()],
    )
    add_story_options(p)
    p.add_argument(
        "--registry",
        metavar="HOST:PORT",
        help="the registry the nodes pull the images from (default: one started here on "
        f"{LOCAL_REGISTRY} from Debian's docker-registry, removed afterwards)",
    )
    p.add_argument(
        "--engines",
        action="store_true",
        help="on three Docker engines of this machine joined as one swarm (make swarm-nodes; "
        "started here and removed afterwards when they are not running), with their registry",
    )
    p.add_argument(
        "--lose",
        metavar="HOW:NODE",
        help="with --engines: lose a worker while the load runs, drained (drain:worker1) or its "
        "engine stopped (stop:worker1); a repeat with a task on it has its verdict withheld",
    )
    p.add_argument(
        "--lose-at",
        type=float,
        metavar="S",
        help="seconds after the senders start (default: 5 s into the incident)",
    )
    p.add_argument("--replicas", type=int, default=2, help="replicas of the app (default 2)")
    p.add_argument(
        "--senders",
        type=int,
        default=2,
        help="open-loop senders, each at rate/senders (default 2)",
    )
    p.add_argument(
        "--repeat",
        type=options.positive(int),
        default=1,
        help="measure each target N times, each on a freshly deployed stack (default 1)",
    )
    # The story's settings object has the closed loop's connections; there is none here.
    p.set_defaults(handler=cmd_swarm, ab_concurrency=None)


def cmd_swarm(args: argparse.Namespace, out: Console, err: Console) -> int:
    # Everything a reader can get wrong is refused here, before Docker is touched.
    targets = resolve_story(args.targets or DEFAULT_TARGETS)
    settings = settings_from(args)
    lose = loss_plan(
        args.lose,
        at_s=settings.before_s + 5 if args.lose_at is None else args.lose_at,
        engines=args.engines,
        workers=engines.WORKERS,
        duration_s=settings.duration,
    )
    swarm = swarm_settings(
        registry=args.registry,
        replicas=args.replicas,
        senders=args.senders,
        engines=args.engines,
        nodes=(engines.MANAGER, *engines.WORKERS),
        lose=lose,
    )
    remedies.check_settings(targets, pool=settings.workers * settings.threads)
    if not swarm.engines:
        require_registry(swarm.registry)
    info = (lambda line: None) if args.quiet else out.print
    with session(args, out) as docker, ExitStack() as steps:
        docker.env.update(settings.compose_env())
        manager = steps.enter_context(engines.for_run(docker, info=info)) if swarm.engines else None
        run = new_story_run(args, docker, settings, repeat=args.repeat)
        run.run_id = run.run_id.removesuffix("-story") + "-swarm"
        run.kind = "swarm"
        store = RunStore.create_run(results_dir=args.results_dir, run=run)
        base = SwarmRun(
            docker=docker,
            settings=settings,
            swarm=swarm,
            run_dir=store.raw_dir,
            info=info,
            wait_timeout_s=args.wait_timeout,
            build=not args.no_build,
            manager=manager,
        )
        try:
            measure_all(
                base,
                run,
                store,
                targets,
                reading=_reading(settings),
                warn=lambda line: err.print(line),
            )
        except KeyboardInterrupt:
            err.print(f"\ninterrupted: the stack and the registry are removed; {store.path}")
            return 130
        finally:
            store.save_run(run)
        run.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store.save_run(run)
        paths = report.write_report(run_dir=store.run_dir, run=run)
    return print_outcome(run, results=store.path, paths=paths, out=out, err=err)


def _reading(settings: StorySettings) -> Reading:
    """The story's figures and findings of one measurement on the stack (no server samples or
    access log: the senders' records alone), and its spreads over the repeats."""

    def figures(entry: StoryTarget, output: GeneratorOutput) -> StoryTarget:
        entry = measure_incident(
            entry, output=output, samples=[], access_text="", settings=settings
        )
        entry.findings = findings.for_target(entry)
        return entry

    return Reading(
        figures=figures,
        spreads=lambda targets: repeats.spreads(targets, after_s=settings.after_s),
    )

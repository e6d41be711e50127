"""`playground swarm`: the war story's incident on a Docker Swarm stack made from the same
compose files, the app replicated, the load from several senders (docs/cluster.md).

A command of its own rather than `story --swarm`: its life is another engine's (swarm mode, a
registry, a stack, sender services, all removed afterwards), and most of the story's other
options (--closed-loop, --sweep, --cliff, --cross-check, --url) have no meaning on it; it
takes the story's targets and incident options as they are.
"""

from __future__ import annotations

import argparse
import json
import time

from rich.console import Console

from playground.commands import options
from playground.commands.options import Subparsers
from playground.commands.session import session
from playground.commands.story import add_story_options, settings_from
from playground.core import remedies
from playground.core.jsonmodel import to_json
from playground.core.odds import Frequency
from playground.core.scenarios import resolve_story
from playground.swarm.live import SwarmRun, run_swarm
from playground.swarm.settings import LOCAL_REGISTRY, swarm_settings

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
    p.add_argument("--replicas", type=int, default=2, help="replicas of the app (default 2)")
    p.add_argument(
        "--senders",
        type=int,
        default=2,
        help="open-loop senders, each at rate/senders, on any node (default 2)",
    )
    # The story's settings object has the closed loop's connections; there is none here.
    p.set_defaults(handler=cmd_swarm, ab_concurrency=None)


def cmd_swarm(args: argparse.Namespace, out: Console, err: Console) -> int:
    # Everything a reader can get wrong is refused here, before Docker is touched.
    swarm = swarm_settings(registry=args.registry, replicas=args.replicas, senders=args.senders)
    targets = resolve_story(args.targets or DEFAULT_TARGETS)
    settings = settings_from(args)
    remedies.check_settings(targets, pool=settings.workers * settings.threads)
    with session(args, out) as docker:
        docker.env.update(settings.compose_env())
        run_dir = args.results_dir / (time.strftime("%Y%m%d-%H%M%S") + "-swarm")
        for target in targets:
            target_dir = run_dir / target.name
            target_dir.mkdir(parents=True, exist_ok=True)
            run = SwarmRun(
                docker=docker,
                settings=settings,
                swarm=swarm,
                run_dir=target_dir,
                info=(lambda line: None) if args.quiet else out.print,
                wait_timeout_s=args.wait_timeout,
            )
            merged = run_swarm(run, target=target)
            (target_dir / "merged.json").write_text(json.dumps(merged.result) + "\n")
            senders = [to_json(s) for s in merged.senders]
            (target_dir / "senders.json").write_text(json.dumps(senders, indent=2) + "\n")
            kept = Frequency(sum(s.check.valid for s in merged.senders), len(merged.senders))
            out.print(f"{target.name}: {kept.text()} senders kept their schedule")
            if not merged.trusted:
                err.print(f"[red]{target.name}: the run is not trusted[/red]", highlight=False)
                for reason in merged.result["check"]["reasons"]:
                    err.print(f"  {reason}", highlight=False)
    return 0

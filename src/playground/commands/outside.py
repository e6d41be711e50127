"""`playground story --url URL`: the story's users against a service already running, the
incident made where the reader chooses (docs/your-service.md). The flags become
:class:`playground.story.external.OutsideSettings`; :func:`playground.story.external.run_outside`
measures."""

from __future__ import annotations

import argparse
import time

from rich.console import Console

from playground.commands.session import session
from playground.commands.storyoutcome import new_story_run, print_outcome
from playground.core.compose import DELAY_PROXY_COMPOSE, STORY_LOADGEN_SERVICES
from playground.core.runstore import RunStore
from playground.incident.settings import StoryError, StorySettings
from playground.story import report
from playground.story.delayproxy import Dependency
from playground.story.external import OutsideSettings, preflight, run_outside
from playground.story.netem import NetemTarget
from playground.story.run import RunInProgress

# Flags of the story that --url does not go with: they bring the story's own targets up.
NOT_WITH_URL = (
    "targets",
    "closed_loop",
    "sweep",
    "cross_check",
    "contenders",
    "remedies",
    "cliff",
    "no_incident",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "your own service (docs/your-service.md)",
        "the story's users against a service already running; nothing is brought up or down",
    )
    group.add_argument("--url", help="the page the users ask for, e.g. http://ingress:8080/")
    group.add_argument(
        "--url-name",
        default="your-service",
        help="the name the run gives it (compare it with a run that has the same name)",
    )
    group.add_argument(
        "--network",
        default="host",
        help="the Docker network the load generator joins (default: the host's)",
    )
    group.add_argument(
        "--slow-dependency",
        metavar="NAME=URL",
        help="start the delay proxy as NAME on --network, in front of URL (point the "
        "service at NAME); it adds --incident-delay minus --normal-delay to every call "
        "during the incident, and is removed afterwards",
    )
    group.add_argument(
        "--slow-netem",
        metavar="CONTAINER:HOST",
        help="delay CONTAINER's packets to HOST with tc netem during the incident (refused "
        "where the kernel has no netem qdisc)",
    )
    group.add_argument("--incident-start", metavar="CMD", help="a shell command at its start")
    group.add_argument("--incident-end", metavar="CMD", help="... and at its end")


def outside_from(args: argparse.Namespace) -> OutsideSettings:
    clash = [f"--{n.replace('_', '-')}" for n in NOT_WITH_URL if getattr(args, n)]
    if clash:
        raise StoryError(
            f"--url measures a service already running: {', '.join(clash)} bring the story's "
            "own targets up and do not go with it"
        )
    return OutsideSettings(
        url=args.url,
        name=args.url_name,
        network=args.network,
        dependency=Dependency.parse(args.slow_dependency) if args.slow_dependency else None,
        netem=NetemTarget.parse(args.slow_netem) if args.slow_netem else None,
        incident_start=args.incident_start,
        incident_end=args.incident_end,
    )


def cmd_outside(
    args: argparse.Namespace, settings: StorySettings, out: Console, err: Console
) -> int:
    outside = outside_from(args)
    outside.check(settings)
    with session(args, out) as docker:
        if not args.no_build:
            docker.build([DELAY_PROXY_COMPOSE], generators=STORY_LOADGEN_SERVICES)
        preflight(docker, outside)
        run = new_story_run(args, docker, settings)
        story = RunInProgress(
            run=run,
            store=RunStore.create_run(results_dir=args.results_dir, run=run),
            docker=docker,
            info=(lambda line: None) if args.quiet else out.print,
            warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False),
        )
        try:
            run_outside(story, outside)
        except KeyboardInterrupt:
            err.print(f"\ninterrupted: nothing of the playground's is left; {story.store.path}")
            return 130
        run.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        story.save()
        paths = report.write_report(run_dir=story.store.run_dir, run=run)
    return print_outcome(run, results=story.store.path, paths=paths, out=out, err=err)

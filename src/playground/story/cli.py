"""`playground story`: the war story's four modes through the same incident, and a report."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rich.console import Console

from playground import results
from playground.compose import Docker
from playground.story import report
from playground.story.plan import BY_NAME, MODES, StorySettings
from playground.story.run import StoryRun, run_story

DEFAULTS = StorySettings()


def _number(kind):
    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    return parse


def add_parser(sub) -> None:
    p = sub.add_parser(
        "story", help="the war story: open-loop users through an incident at the third party, "
                      "thread pools against gevent (docs/story.md)")
    p.add_argument("modes", nargs="*", metavar="MODE",
                   help=f"modes to run: {', '.join(BY_NAME)} (default: all four)")
    d = DEFAULTS
    for flag, attr, kind, text in (
            ("--rate", "rate", float, "visits per second"),
            ("--normal-delay", "normal_delay", float, "the third party's normal answer time"),
            ("--incident-delay", "incident_delay", float, "... and during the incident"),
            ("--before", "before_s", float, "seconds of normal load before the incident"),
            ("--incident", "incident_s", float, "seconds the incident lasts"),
            ("--after", "after_s", float, "seconds of normal load after it"),
            ("--timeout", "timeout", float, "seconds a user waits before giving up"),
            ("--refresh-delay", "refresh_delay", float, "seconds before a user reloads"),
            ("--max-attempts", "max_attempts", int, "attempts per visit, the first included"),
            ("--seed", "seed", int, "seed of the Poisson arrivals"),
            ("--workers", "workers", int, "processes per app server"),
            ("--threads", "threads", int, "threads per process (thread-pool modes)"),
            ("--async-cores", "async_cores", int, "greenlets per process (gevent modes)"),
            ("--listen", "listen", int, "uWSGI's listen queue")):
        p.add_argument(flag, dest=attr, type=_number(kind), default=getattr(d, attr),
                       help=f"{text} (default {getattr(d, attr)})")
    p.add_argument("--arrival", choices=("poisson", "constant"), default=d.arrival)
    p.add_argument("--no-refresh", action="store_true", help="users never reload")
    p.add_argument("--no-build", action="store_true", help="do not build the images first")
    p.add_argument("--results-dir", type=Path, default=None)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, for CI logs")


def settings_from(args: argparse.Namespace) -> StorySettings:
    names = ("rate", "normal_delay", "incident_delay", "before_s", "incident_s", "after_s",
             "timeout", "refresh_delay", "max_attempts", "seed", "workers", "threads",
             "async_cores", "listen", "arrival")
    values = {n: getattr(args, n) for n in names}
    if args.no_refresh:
        values["max_attempts"] = 1
    return StorySettings(**values)


def cmd_story(args: argparse.Namespace, out: Console, err: Console, *, root: Path,
              default_results: Path) -> int:
    unknown = [m for m in args.modes if m not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown mode {unknown[0]!r}; modes: {', '.join(BY_NAME)}")
    modes = [BY_NAME[m] for m in args.modes] if args.modes else list(MODES)
    settings = settings_from(args)
    results_dir = args.results_dir or default_results
    docker = Docker(root=root, echo=(lambda line: None) if args.quiet else
                    (lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False)))
    docker.env.update(settings.compose_env())
    docker.preflight()
    info = (lambda line: None) if args.quiet else out.print
    with results.exclusive(results_dir):
        if not args.no_build:
            docker.build(sorted({m.compose_file for m in modes}))
        run_dir = results_dir / (results.new_run_id() + "-story")
        run_dir.mkdir(parents=True)
        store = StoryRun(run_dir=run_dir, data={
            "kind": "story", "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": "playground " + " ".join(sys.argv[1:]),
            "environment": {**docker.versions(), "cpu_count": os.cpu_count(),
                            "images": docker.image_ids(["flask-playground/flask_app",
                                                        "flask-playground/slow_api",
                                                        "flask-playground/loadgen"])},
            "settings": settings.as_dict(), "modes": []})
        store.save()
        try:
            run_story(docker=docker, modes=modes, settings=settings, store=store, info=info,
                      warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False))
        except KeyboardInterrupt:
            paths = report.write_report(run_dir=run_dir, data=store.data)
            err.print(f"\ninterrupted: finished modes are in {store.path} and {paths[0]}")
            return 130
        store.data["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store.save()
        paths = report.write_report(run_dir=run_dir, data=store.data)
    out.print(f"results: {store.path}")
    for path in paths[:2]:
        out.print(f"         {path}")
    bad = [m["mode"] for m in store.data["modes"] if "error" in m or m.get("adds_up")]
    return 1 if bad else 0

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
from playground.story.plan import BY_NAME, MODES, StoryError, StorySettings, SweepSettings
from playground.story.run import StoryRun, run_story, run_sweep

DEFAULTS = StorySettings()
SWEEP = SweepSettings()


def _number(kind):
    def parse(text: str):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None

    return parse


def _rates(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected rates like 20,40,60, got {text!r}") from None


def add_parser(sub) -> None:
    p = sub.add_parser(
        "story",
        help="the war story: open-loop users through an incident at the third party, "
        "thread pools against gevent (docs/story.md)",
    )
    p.add_argument(
        "modes",
        nargs="*",
        metavar="MODE",
        help=f"modes to run: {', '.join(BY_NAME)} (default: all four)",
    )
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
        ("--listen", "listen", int, "uWSGI's listen queue"),
    ):
        p.add_argument(
            flag,
            dest=attr,
            type=_number(kind),
            default=getattr(d, attr),
            help=f"{text} (default {getattr(d, attr)})",
        )
    p.add_argument(
        "--ab-concurrency",
        type=_number(int),
        default=None,
        help="ab's connections for --closed-loop (default: rate x normal delay, "
        f"{d.closed_loop_concurrency})",
    )
    p.add_argument(
        "--closed-loop",
        action="store_true",
        help="also drive the same incident with ab (a closed loop), per mode",
    )
    p.add_argument(
        "--sweep",
        action="store_true",
        help="also sweep goodput against offered load per mode, the third party "
        "at a fixed delay (--sweep-*)",
    )
    p.add_argument(
        "--no-incident",
        action="store_true",
        help="leave out the open-loop incident (run only --closed-loop/--sweep)",
    )
    w = SWEEP
    p.add_argument(
        "--sweep-rates",
        type=_rates,
        default=w.rates,
        help=f"offered visits/s, one step each (default {','.join(f'{r:g}' for r in w.rates)})",
    )
    for flag, attr, text in (
        ("--sweep-delay", "delay", "the third party's delay throughout the sweep"),
        ("--sweep-warmup", "warmup_s", "seconds of load before each step's window"),
        ("--sweep-measure", "measure_s", "seconds in each step's measured window"),
        ("--sweep-settle", "settle_s", "at most this long to drain between steps"),
    ):
        p.add_argument(
            flag,
            dest="sweep_" + attr,
            type=_number(float),
            default=getattr(w, attr),
            help=f"{text} (default {getattr(w, attr):g})",
        )
    p.add_argument("--arrival", choices=("poisson", "constant"), default=d.arrival)
    p.add_argument("--no-refresh", action="store_true", help="users never reload")
    p.add_argument("--no-build", action="store_true", help="do not build the images first")
    p.add_argument("--results-dir", type=Path, default=None)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, for CI logs")


def settings_from(args: argparse.Namespace) -> StorySettings:
    names = (
        "rate",
        "normal_delay",
        "incident_delay",
        "before_s",
        "incident_s",
        "after_s",
        "timeout",
        "refresh_delay",
        "max_attempts",
        "seed",
        "workers",
        "threads",
        "async_cores",
        "listen",
        "arrival",
        "ab_concurrency",
    )
    values = {n: getattr(args, n) for n in names}
    if args.no_refresh:
        values["max_attempts"] = 1
    return StorySettings(**values)


def sweep_from(args: argparse.Namespace) -> SweepSettings:
    return SweepSettings(
        rates=tuple(args.sweep_rates),
        delay=args.sweep_delay,
        warmup_s=args.sweep_warmup_s,
        measure_s=args.sweep_measure_s,
        settle_s=args.sweep_settle_s,
    )


def cmd_story(
    args: argparse.Namespace, out: Console, err: Console, *, root: Path, default_results: Path
) -> int:
    unknown = [m for m in args.modes if m not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown mode {unknown[0]!r}; modes: {', '.join(BY_NAME)}")
    modes = [BY_NAME[m] for m in args.modes] if args.modes else list(MODES)
    settings = settings_from(args)
    sweep = sweep_from(args) if args.sweep else None
    if args.no_incident and not (args.closed_loop or args.sweep):
        raise StoryError("--no-incident leaves nothing to run: add --closed-loop or --sweep")
    results_dir = args.results_dir or default_results
    docker = Docker(
        root=root,
        echo=(lambda line: None)
        if args.quiet
        else (lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False)),
    )
    docker.env.update(settings.compose_env())
    docker.preflight()
    info = (lambda line: None) if args.quiet else out.print
    with results.exclusive(results_dir):
        if not args.no_build:
            docker.build(sorted({m.compose_file for m in modes}))
        run_dir = results_dir / (results.new_run_id() + "-story")
        run_dir.mkdir(parents=True)
        store = StoryRun(
            run_dir=run_dir,
            data={
                "kind": "story",
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": "playground " + " ".join(sys.argv[1:]),
                "environment": {
                    **docker.versions(),
                    "cpu_count": os.cpu_count(),
                    "images": docker.image_ids(
                        [
                            "flask-playground/flask_app",
                            "flask-playground/slow_api",
                            "flask-playground/loadgen",
                        ]
                    ),
                },
                "settings": settings.as_dict(),
                "modes": [],
            },
        )
        store.save()
        warn = lambda line: err.print(f"[red]{line}[/red]", highlight=False)  # noqa: E731
        try:
            if not args.no_incident or args.closed_loop:
                run_story(
                    docker=docker,
                    modes=modes,
                    settings=settings,
                    store=store,
                    info=info,
                    warn=warn,
                    incident=not args.no_incident,
                    closed_loop=args.closed_loop,
                )
            if sweep is not None:
                run_sweep(
                    docker=docker,
                    modes=modes,
                    settings=settings,
                    sweep=sweep,
                    store=store,
                    info=info,
                    warn=warn,
                )
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
    bad = [
        m["mode"]
        for m in store.data["modes"]
        if "error" in m
        or m.get("adds_up")
        or "closed_loop_error" in m
        or (m.get("closed_loop") or {}).get("adds_up")
    ]
    bad += [
        m["mode"]
        for m in (store.data.get("sweep") or {}).get("modes", [])
        if "error" in m or any(step["adds_up"] for step in m["steps"])
    ]
    return 1 if bad else 0

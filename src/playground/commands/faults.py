"""`playground faults`: inject faults under load and report how each serving mode copes."""

from __future__ import annotations

import argparse

from rich.console import Console

from playground.commands import options
from playground.commands.options import Subparsers
from playground.commands.session import build, session
from playground.core import environment, runstore
from playground.core.scenarios import SCENARIOS, resolve
from playground.faults.registry import names as fault_names
from playground.faults.render import write_report
from playground.faults.results import FaultRunSettings, FaultSettings, FaultsRun
from playground.faults.run import run_faults


def add_parser(sub: Subparsers) -> None:
    f = sub.add_parser(
        "faults",
        help="inject faults under load (upstream slow-down or outage, database "
        "outage, overload) and report how each mode copes",
        parents=[options.session()],
    )
    # In the order `--help` shows them: what to break, then its phases and loads.
    _add_what_to_break(f)
    _add_phases(f)
    f.set_defaults(handler=cmd_faults)


def _add_what_to_break(f: argparse.ArgumentParser) -> None:
    f.add_argument(
        "names",
        nargs="*",
        metavar="SCENARIO",
        help="scenarios (see `playground list`); default: every one (db-outage: the bonus)",
    )
    f.add_argument(
        "--fault",
        action="append",
        choices=fault_names(),
        dest="faults",
        help="the fault to inject; repeat for several (default: all four)",
    )
    f.add_argument(
        "-c",
        "--concurrency",
        type=options.positive(int),
        help="probe clients per scenario (default: the scenario's tutorial c)",
    )


def _add_phases(f: argparse.ArgumentParser) -> None:
    f.add_argument("--delay", type=options.positive(float), default=1.0, help="normal delay (1 s)")
    f.add_argument(
        "--slow-delay",
        type=options.positive(float),
        default=5.0,
        help="the delay while the upstream is slow (upstream-slowdown; 5 s)",
    )
    f.add_argument(
        "--baseline",
        type=options.positive(float),
        default=5.0,
        help="seconds of normal load before the fault (5)",
    )
    f.add_argument(
        "--fault-seconds",
        type=options.positive(float),
        default=10.0,
        help="seconds the fault lasts (10)",
    )
    f.add_argument(
        "--recovery",
        type=options.positive(float),
        default=15.0,
        help="seconds of normal load after it (15)",
    )
    f.add_argument(
        "--probe-timeout",
        type=options.positive(float),
        default=60.0,
        help="a probe request unanswered after this long counts as hung (60)",
    )
    f.add_argument(
        "--overload-concurrency",
        type=options.positive(int),
        default=2000,
        help="ab's -c for the overload fault (2000)",
    )
    f.add_argument(
        "--overload-seconds",
        type=options.positive(float),
        default=30.0,
        help="ab's time limit for the overload fault (30)",
    )


def cmd_faults(args: argparse.Namespace, out: Console, err: Console) -> int:
    names = args.names or [t.name for t in SCENARIOS]
    targets = tuple(resolve(names=names))
    faults = tuple(dict.fromkeys(args.faults or fault_names()))
    settings = FaultSettings(
        concurrency=args.concurrency,
        delay=args.delay,
        slow_delay=args.slow_delay,
        baseline_s=args.baseline,
        fault_s=args.fault_seconds,
        recovery_s=args.recovery,
        probe_timeout_s=args.probe_timeout,
        overload_concurrency=args.overload_concurrency,
        overload_s=args.overload_seconds,
        wait_timeout_s=args.wait_timeout,
    )
    with session(args, out) as docker:
        build(docker, [t.compose_file for t in targets], args=args)
        run = FaultsRun(
            run_id=runstore.new_run_id() + "-faults",
            started_at=runstore.now(),
            command=args.command_line,
            environment=environment.docker_only(docker),
            settings=FaultRunSettings(faults=list(faults), options=settings),
        )
        store = runstore.RunStore.create_run(results_dir=args.results_dir, run=run)
        try:
            run_faults(
                docker=docker,
                targets=targets,
                faults=faults,
                settings=settings,
                store=store,
                info=(lambda line: None) if args.quiet else out.print,
                warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False),
            )
        except KeyboardInterrupt:
            path = write_report(run_dir=store.run_dir, run=run)
            err.print(
                f"\ninterrupted: the scenario that was up has been torn down; finished "
                f"faults are in {store.path} and {path}"
            )
            return 130
        store.finish()
        path = write_report(run_dir=store.run_dir, run=run)
    problems = run.problems()
    for line in problems:
        err.print(f"[red]problem: {line}[/red]", highlight=False)
    out.print(f"results: {store.path}\n         {path}")
    return 1 if problems else 0

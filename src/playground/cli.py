"""`playground`: run the comparison, list what can run, compare two runs, redraw a report."""

from __future__ import annotations

import argparse
import math
import dataclasses
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from playground import contenders, contenders_report, demos, environment
from playground import load as loadmod
from playground import faults as faultsmod
from playground import report, results
from playground.compose import WAIT_TIMEOUT_S, Docker, DockerError
from playground.results import ResultsError, RunStore
from playground.runner import Plan, Runner
from playground.runner import Progress as RunnerProgress
from playground.scenarios import ARES_VARIANTS, CALIBRATION, REGISTRY, SCENARIOS, resolve

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RESULTS = ROOT / "results"
# The scale profile: every serving mode that could hold many requests, up to c=10,000.
SCALE_DEFAULT = ("gevent-pywsgi", "gunicorn-gevent", "uwsgi-gevent", "nginx-gunicorn",
                 "nginx-uwsgi", "devserver-threads", "gunicorn-threads", "uwsgi-threads")
SCALE_SWEEP = (100, 1000, 3000, 10000)
SCALE_UTILISATION = 0.25
MAX_SCALE_DELAY_S = 600.0  # the scale overrides raise MAX_DELAY to this


def _positive_int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}")
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"concurrencies must be whole numbers >= 1, got {text!r}")
    return values


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not value > 0 and not (kind is float and value == 0):
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="playground",
        description="Bring each scenario up, load it, sample its threads, and report.")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run scenarios (all nine by default) and write a report")
    run.add_argument("names", nargs="*", metavar="SCENARIO",
                     help="scenarios to run (see `playground list`); default: all")
    run.add_argument("--demos", action="store_true",
                     help="run the companion demos (demos/) instead of the nine scenarios")
    run.add_argument("--contenders", action="store_true",
                     help="run the 2026 contenders (contenders/) instead of the nine scenarios")
    run.add_argument("--published", action="store_true",
                     help="run only the wrk demo, at its published load (wrk -t12 -c400 "
                          "-d30s, 10 s sleep; about 6 minutes)")
    run.add_argument("-n", "--requests", type=_positive(int), help="requests per load")
    run.add_argument("-c", "--concurrency", type=_positive(int), help="concurrent clients")
    run.add_argument("--delay", type=_positive(float), help="upstream delay in seconds")
    run.add_argument("--sweep", type=_positive_int_list, default=(),
                     help="concurrency sweep, e.g. 10,50,200,1000")
    run.add_argument("--repeat", type=_positive(int), default=1,
                     help="measure each load K times; report the median and the spread")
    run.add_argument("--tool", choices=sorted(loadmod.TOOLS), default="ab")
    run.add_argument("--duration", type=_positive(float), default=10.0,
                     help="seconds per load with wrk (default 10)")
    run.add_argument("--from-host", action="store_true",
                     help="run the load generator on this host against 127.0.0.1 "
                          "(needs ab or wrk installed); default: in a container")
    run.add_argument("--no-calibration", action="store_true",
                     help="skip the run straight at slow_api (the harness ceiling)")
    run.add_argument("--no-build", action="store_true", help="do not build the images first")
    run.add_argument("--resume", metavar="RUN",
                     help="continue an interrupted run (a run id, 'latest' or a path)")
    run.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS)
    run.add_argument("-q", "--quiet", action="store_true", help="no progress, for CI logs")
    run.add_argument("--wait-timeout", type=_positive(int), default=WAIT_TIMEOUT_S,
                     help=f"seconds a scenario may take to become healthy before it is recorded "
                          f"as failed with its last log lines (default {WAIT_TIMEOUT_S})")
    _add_faults_parser(sub)

    scale = sub.add_parser(
        "scale", help="concurrency sweep up to c=10,000 with the scale overrides (scale/)")
    scale.add_argument("names", nargs="*", metavar="SCENARIO",
                       help="modes to sweep; default: the gevent and thread-based scenarios")
    scale.add_argument("--contenders", action="store_true",
                       help="sweep the 2026 contenders (contenders/) instead")
    scale.add_argument("--ares", action="store_true",
                       help="also sweep the gevent scenarios with the c-ares resolver")
    scale.add_argument("--sweep", type=_positive_int_list, default=SCALE_SWEEP,
                       help="concurrencies (default %(default)s)")
    scale.add_argument("--utilisation", type=_positive(float), default=SCALE_UTILISATION,
                       help="fraction of one core the ideal rate may use (default %(default)s)")
    scale.add_argument("--probe", default="gunicorn-gevent",
                       help="scenario whose CPU per request sets the delays")
    scale.add_argument("--stop-below", type=_positive(float), default=0.5,
                       help="skip a mode's higher concurrencies once its efficiency falls "
                            "below this (default %(default)s)")
    scale.add_argument("--repeat", type=_positive(int), default=1)
    scale.add_argument("--no-build", action="store_true")
    scale.add_argument("--resume", metavar="RUN", help="continue an interrupted scale run")
    scale.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS)
    scale.add_argument("-q", "--quiet", action="store_true")
    scale.add_argument("--wait-timeout", type=_positive(int), default=WAIT_TIMEOUT_S)

    sub.add_parser("list", help="list the scenarios and their default loads")

    compare = sub.add_parser("compare", help="compare two runs side by side")
    compare.add_argument("run_a")
    compare.add_argument("run_b")
    compare.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS)

    rep = sub.add_parser("report", help="write a run's report again from its results.json")
    rep.add_argument("run", nargs="?", default="latest")
    rep.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS)
    return parser


def cmd_list(out: Console) -> int:
    table = Table(title="scenarios")
    for col in ("name", "compose file", "service", "host URL", "n", "c", "tutorial rps"):
        table.add_column(col)
    for t in REGISTRY.values():
        table.add_row(t.name, t.compose_file, f"{t.service}:{t.port}",
                      t.host_url(delay=t.delay) or "-", str(t.requests), str(t.concurrency),
                      "-" if t.tutorial_rps is None else f"{t.tutorial_rps:g}")
    out.print(table)
    return 0


def _add_faults_parser(sub) -> None:
    f = sub.add_parser(
        "faults", help="inject faults under load (upstream slow-down or outage, database "
                       "outage, overload) and report how each mode copes")
    f.add_argument("names", nargs="*", metavar="SCENARIO",
                   help="scenarios (see `playground list`); default: all nine (db-outage: the "
                        "bonus)")
    f.add_argument("--fault", action="append", choices=faultsmod.FAULTS, dest="faults",
                   help="the fault to inject; repeat for several (default: all four)")
    f.add_argument("-c", "--concurrency", type=_positive(int),
                   help="probe clients per scenario (default: the scenario's tutorial c)")
    f.add_argument("--delay", type=_positive(float), default=1.0, help="normal delay (1 s)")
    f.add_argument("--slow-delay", type=_positive(float), default=5.0,
                   help="the delay while the upstream is slow (upstream-slowdown; 5 s)")
    f.add_argument("--baseline", type=_positive(float), default=5.0,
                   help="seconds of normal load before the fault (5)")
    f.add_argument("--fault-seconds", type=_positive(float), default=10.0,
                   help="seconds the fault lasts (10)")
    f.add_argument("--recovery", type=_positive(float), default=15.0,
                   help="seconds of normal load after it (15)")
    f.add_argument("--probe-timeout", type=_positive(float), default=60.0,
                   help="a probe request unanswered after this long counts as hung (60)")
    f.add_argument("--overload-concurrency", type=_positive(int), default=2000,
                   help="ab's -c for the overload fault (2000)")
    f.add_argument("--overload-seconds", type=_positive(float), default=30.0,
                   help="ab's time limit for the overload fault (30)")
    f.add_argument("--wait-timeout", type=_positive(int), default=WAIT_TIMEOUT_S,
                   help=f"seconds a scenario may take to become healthy ({WAIT_TIMEOUT_S})")
    f.add_argument("--no-build", action="store_true", help="do not build the images first")
    f.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS)
    f.add_argument("-q", "--quiet", action="store_true", help="no progress, for CI logs")


def cmd_faults(args: argparse.Namespace, out: Console, err: Console) -> int:
    names = args.names or [t.name for t in SCENARIOS]
    targets = tuple(resolve(names=names))
    faults = tuple(dict.fromkeys(args.faults or faultsmod.FAULTS))
    settings = faultsmod.FaultSettings(
        concurrency=args.concurrency, delay=args.delay, slow_delay=args.slow_delay,
        baseline_s=args.baseline, fault_s=args.fault_seconds, recovery_s=args.recovery,
        probe_timeout_s=args.probe_timeout, overload_concurrency=args.overload_concurrency,
        overload_s=args.overload_seconds, wait_timeout_s=args.wait_timeout)
    _interrupt_on_sigterm()
    docker = Docker(root=ROOT, echo=(lambda line: None) if args.quiet else
                    (lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False)))
    docker.preflight()
    with results.exclusive(args.results_dir):
        if not args.no_build:
            docker.build(sorted({t.compose_file for t in targets}))
        header = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  "command": "playground " + " ".join(sys.argv[1:]),
                  "environment": {**docker.versions(), "cpu_count": os.cpu_count()},
                  "settings": {"faults": list(faults), **dataclasses.asdict(settings)}}
        store = faultsmod.FaultStore.create(results_dir=args.results_dir,
                                            run_id=results.new_run_id() + "-faults",
                                            header=header)
        try:
            faultsmod.run_faults(
                docker=docker, targets=targets, faults=faults, settings=settings, store=store,
                info=(lambda line: None) if args.quiet else out.print,
                warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False))
        except KeyboardInterrupt:
            path = faultsmod.write_report(run_dir=store.run_dir, data=store.data)
            err.print(f"\ninterrupted: the scenario that was up has been torn down; finished "
                      f"faults are in {store.path} and {path}")
            return 130
        store.data["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store.save()
        path = faultsmod.write_report(run_dir=store.run_dir, data=store.data)
    problems = faultsmod.problems(store.data)
    for line in problems:
        err.print(f"[red]problem: {line}[/red]", highlight=False)
    out.print(f"results: {store.path}\n         {path}")
    return 1 if problems else 0


def _interrupt_on_sigterm() -> None:
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    default = (demos.PUBLISHED if args.published else demos.DEMOS if args.demos
               else contenders.CONTENDERS if args.contenders else SCENARIOS)
    names = args.names or [t.name for t in default]
    targets = tuple(resolve(names=names))
    plan = Plan(targets=targets, tool=args.tool, requests=args.requests,
                concurrency=args.concurrency, delay=args.delay, sweep=args.sweep,
                repeat=args.repeat, duration_s=args.duration, from_host=args.from_host,
                wait_timeout_s=args.wait_timeout,
                calibration=not (args.no_calibration or args.demos or args.published
                                 or all(t.kind == "demo" for t in targets)))
    settings = {"requests": args.requests, "concurrency": args.concurrency,
                "delay": args.delay, "tool": args.tool, "repeat": args.repeat,
                "sweep": list(args.sweep) or None, "from_host": args.from_host}
    return _session(args, out, err, plan=plan, settings=settings, tool=args.tool)


def cmd_scale(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Sweep concurrency up to 10,000 with delays long enough that CPU is not the limit.

    A probe first measures the app's CPU per request (one process, c=200); each concurrency
    then gets the delay that keeps the ideal c / delay at a fraction (`--utilisation`) of what
    one core can serve, so a shortfall shows the server model, not a busy CPU.
    """
    names = args.names or ([t.name for t in contenders.SCALE] if args.contenders
                           else list(SCALE_DEFAULT))
    if args.ares:
        names += [t.name for t in ARES_VARIANTS if t.name not in names]
    targets = tuple(resolve(names=names))
    probe = replace(resolve(names=[args.probe])[0], name=f"probe-{args.probe}", kind="probe",
                    requests=1000, concurrency=200, delay=0.5)
    overrides = ROOT / "scale"

    def prepare(store: RunStore, runner_for) -> Plan:
        scale = store.data["settings"].get("scale")
        if not scale:
            runner_for(Plan(targets=(probe,), overrides_dir=overrides, calibration=False,
                            wait_timeout_s=args.wait_timeout)).run(None)
            # The probe is a measurement of the machine, not a point of the sweep.
            entry = next(e for e in store.data["scenarios"] if e["name"] == probe.name)
            store.data["scenarios"].remove(entry)
            store.data["probe"] = entry
            scale = scale_settings(cpu_ms=entry.get("cpu_ms_per_request"), sweep=args.sweep,
                                   utilisation=args.utilisation, probe=args.probe)
            store.data["settings"]["scale"] = scale
            store.save()
        delays = tuple((int(c), float(d)) for c, d in scale["delays"].items())
        return Plan(targets=targets, sweep=args.sweep, delays=delays, repeat=args.repeat,
                    overrides_dir=overrides, stop_below=args.stop_below, calibration=False,
                    wait_timeout_s=args.wait_timeout)

    settings = {"requests": None, "concurrency": None, "delay": None, "tool": "ab",
                "repeat": args.repeat, "sweep": list(args.sweep), "from_host": False,
                "scale": None}
    return _session(args, out, err, plan=None, prepare=prepare, settings=settings, tool="ab",
                    targets=(*targets, probe))


def scale_settings(*, cpu_ms: float | None, sweep: tuple[int, ...], utilisation: float,
                   probe: str) -> dict:
    """The delay per concurrency that keeps c / delay at `utilisation` of one core."""
    if not cpu_ms:
        raise ValueError(f"the probe ({probe}) measured no CPU per request; cannot pick delays")
    rate = utilisation * 1000 / cpu_ms
    delays = {c: min(MAX_SCALE_DELAY_S, max(1.0, math.ceil(2 * c / rate) / 2)) for c in sweep}
    return {"probe": probe, "cpu_ms_per_request": cpu_ms, "utilisation": utilisation,
            "rate": rate, "delays": delays}


def _session(args: argparse.Namespace, out: Console, err: Console, *, plan: Plan | None,
             settings: dict, tool: str, prepare=None, targets: tuple = ()) -> int:
    """Preflight, lock, build, then run a plan into a new (or resumed) run and report it."""
    targets = targets or plan.targets
    quiet = args.quiet
    # From the start: a SIGTERM during the build or set-up ends as cleanly as a Ctrl-C.
    _interrupt_on_sigterm()
    docker = Docker(root=ROOT, echo=(lambda line: None) if quiet else
                    (lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False)))
    docker.preflight()
    with results.exclusive(args.results_dir):
        if not args.no_build:
            out.print("building images (docker compose build)..." if not quiet else "", end="")
            files = sorted({t.compose_file for t in targets} | {CALIBRATION.compose_file})
            docker.build(files)
            out.print("")
        if args.resume:
            store = RunStore.resume(results_dir=args.results_dir, ref=args.resume)
            out.print(f"resuming {store.run_dir}")
        else:
            version = docker.run(docker.loadgen_argv(network="none", tool_argv=[tool, "-V"]
                                                     if tool == "ab" else ["wrk", "-v"]),
                                 check=False, quiet=True)
            header = {
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": "playground " + " ".join(sys.argv[1:]),
                "environment": environment.collect(
                    root=ROOT, docker=docker, tool=tool,
                    tool_version=loadmod.tool_version(stdout=version.stdout + version.stderr)),
                "settings": settings,
            }
            store = RunStore.create(results_dir=args.results_dir, run_id=results.new_run_id(),
                                    header=header)
        progress = _progress(out, err, quiet=quiet)

        def runner_for(p: Plan) -> Runner:
            return Runner(docker=docker, store=store, plan=p, progress=progress)

        try:
            if prepare is not None:
                plan = prepare(store, runner_for)
            runner_for(plan).run(CALIBRATION)
        except KeyboardInterrupt:
            err.print(f"\ninterrupted: the scenario that was up has been torn down; finished "
                      f"results are in {store.path} (continue with --resume {store.run_dir.name})")
            report.write_report(run_dir=store.run_dir, results=store.data)
            return 130
        store.data["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store.save()
        written = report.write_report(run_dir=store.run_dir, results=store.data)
    out.print(report.summary_table(results=store.data))
    if (demo_table := report.demo_table(results=store.data)) is not None:
        out.print(demo_table)
    written += contenders_report.write_section(run_dir=store.run_dir, results=store.data)
    out.print(f"results: {store.path}")
    for path in written:
        out.print(f"         {path}")
    return 0


def _progress(out: Console, err: Console, *, quiet: bool) -> RunnerProgress:
    if quiet:
        return RunnerProgress(warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False))
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                   console=out, transient=True)
    tasks: dict[str, int] = {}

    def started(target, seconds):
        bar.start()
        tasks[target.name] = bar.add_task(
            f"{target.name} n={target.requests} c={target.concurrency}", total=None)

    def finished(target):
        task = tasks.pop(target.name, None)
        if task is not None:
            bar.remove_task(task)
        bar.stop()

    return RunnerProgress(
        echo=lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False),
        info=lambda line: out.print(line),
        warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False),
        load_started=started, load_finished=finished)


def cmd_compare(args: argparse.Namespace, out: Console) -> int:
    a = results.load(results.resolve_run(args.results_dir, args.run_a))
    b = results.load(results.resolve_run(args.results_dir, args.run_b))
    out.print(report.compare_table(a=a, b=b))
    return 0


def cmd_report(args: argparse.Namespace, out: Console) -> int:
    run_dir = results.resolve_run(args.results_dir, args.run)
    data = results.load(run_dir)
    for path in report.write_report(run_dir=run_dir, results=data):
        out.print(str(path))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # soft_wrap: a printed command stays on one line, so it can be copied and pasted.
    out = Console(highlight=False, soft_wrap=True,
                  width=None if sys.stdout.isatty() else 160)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if args.command == "list":
            return cmd_list(out)
        if args.command == "compare":
            return cmd_compare(args, out)
        if args.command == "report":
            return cmd_report(args, out)
        if args.command == "run":
            return cmd_run(args, out, err)
        if args.command == "scale":
            return cmd_scale(args, out, err)
        if args.command == "faults":
            return cmd_faults(args, out, err)
        build_parser().print_help()
        return 2
    except (DockerError, ResultsError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        err.print(f"[red]playground: {message}[/red]", highlight=False)
        return 2
    except KeyboardInterrupt:
        err.print("\ninterrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())

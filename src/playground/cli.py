"""`playground`: run the comparison, list what can run, compare two runs, redraw a report."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from playground import demos
from playground import load as loadmod
from playground import report, results
from playground.compose import Docker, DockerError
from playground.results import ResultsError, RunStore
from playground.runner import Plan, Runner
from playground.runner import Progress as RunnerProgress
from playground.scenarios import CALIBRATION, REGISTRY, SCENARIOS, resolve

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RESULTS = ROOT / "results"


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


def _interrupt_on_sigterm() -> None:
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, handler)


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    default = demos.DEMOS if args.demos else SCENARIOS
    names = args.names or [t.name for t in default]
    targets = tuple(resolve(names=names))
    plan = Plan(targets=targets, tool=args.tool, requests=args.requests,
                concurrency=args.concurrency, delay=args.delay, sweep=args.sweep,
                repeat=args.repeat, duration_s=args.duration, from_host=args.from_host,
                calibration=not (args.no_calibration or args.demos))
    quiet = args.quiet
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
            version = docker.run(docker.loadgen_argv(network="none", tool_argv=[args.tool, "-V"]
                                                     if args.tool == "ab" else ["wrk", "-v"]),
                                 check=False, quiet=True)
            header = {
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": "playground " + " ".join(sys.argv[1:]),
                "environment": __import__("playground.environment").environment.collect(
                    root=ROOT, docker=docker, tool=args.tool,
                    tool_version=loadmod.tool_version(stdout=version.stdout + version.stderr)),
                "settings": {"requests": args.requests, "concurrency": args.concurrency,
                             "delay": args.delay, "tool": args.tool, "repeat": args.repeat,
                             "sweep": list(args.sweep) or None, "from_host": args.from_host},
            }
            store = RunStore.create(results_dir=args.results_dir, run_id=results.new_run_id(),
                                    header=header)
        runner = Runner(docker=docker, store=store, plan=plan,
                        progress=_progress(out, err, quiet=quiet))
        _interrupt_on_sigterm()
        try:
            runner.run(CALIBRATION)
        except KeyboardInterrupt:
            err.print(f"\ninterrupted: the scenario that was up has been torn down; finished "
                      f"results are in {store.path} (continue with --resume {store.run_dir.name})")
            report.write_report(run_dir=store.run_dir, results=store.data)
            return 130
        store.data["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store.save()
        written = report.write_report(run_dir=store.run_dir, results=store.data)
    out.print(report.summary_table(results=store.data))
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

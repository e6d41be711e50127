"""`playground run`: the tutorial's scenarios (every one by default), the demos or the contenders, measured and
reported."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from playground.bench import newrun
from playground.bench.measure import Prepare, measure_run
from playground.bench.plan import Plan
from playground.bench.runner import Progress as RunnerProgress
from playground.commands import options
from playground.commands.options import Subparsers
from playground.commands.session import build, session
from playground.core import contenders, demos
from playground.core import load as loadmod
from playground.core.compose import Docker
from playground.core.results import BenchSettings, Run
from playground.core.runstore import RunStore
from playground.core.scenarios import CALIBRATION, SCENARIOS, resolve
from playground.core.target import Target
from playground.report import benchpage, terminal


def add_parser(sub: Subparsers) -> None:
    run = sub.add_parser(
        "run",
        help="run the tutorial's scenarios (every one by default) and write a report",
        parents=[options.session(), options.resumable(), options.pinnable()],
    )
    # In the order `--help` shows them: what to run, then how to load it.
    _add_what_to_run(run)
    _add_load(run)
    run.set_defaults(handler=cmd_run)


def _add_what_to_run(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "names",
        nargs="*",
        metavar="SCENARIO",
        help="scenarios to run (see `playground list`); default: all",
    )
    run.add_argument(
        "--demos",
        action="store_true",
        help="run the companion demos (demos/) instead of the nine scenarios",
    )
    run.add_argument(
        "--contenders",
        action="store_true",
        help="run the 2026 contenders (contenders/) instead of the nine scenarios",
    )
    run.add_argument(
        "--published",
        action="store_true",
        help="run only the wrk demo, at its published load (wrk -t12 -c400 "
        "-d30s, 10 s sleep; about 6 minutes)",
    )


def _add_load(run: argparse.ArgumentParser) -> None:
    run.add_argument("-n", "--requests", type=options.positive(int), help="requests per load")
    run.add_argument("-c", "--concurrency", type=options.positive(int), help="concurrent clients")
    run.add_argument("--delay", type=options.positive(float), help="upstream delay in seconds")
    run.add_argument(
        "--sweep",
        type=options.positive_int_list,
        default=(),
        help="concurrency sweep, e.g. 10,50,200,1000",
    )
    run.add_argument(
        "--repeat",
        type=options.positive(int),
        default=1,
        help="measure each load K times; report the median and the spread",
    )
    run.add_argument("--tool", choices=sorted(loadmod.TOOLS), default="ab")
    run.add_argument(
        "--duration",
        type=options.positive(float),
        default=10.0,
        help="seconds per load with wrk (default 10)",
    )
    run.add_argument(
        "--from-host",
        action="store_true",
        help="run the load generator on this host against 127.0.0.1 "
        "(needs ab or wrk installed); default: in a container",
    )
    run.add_argument(
        "--no-calibration",
        action="store_true",
        help="skip the run straight at slow_api (the harness ceiling)",
    )


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    default = (
        demos.PUBLISHED
        if args.published
        else demos.DEMOS
        if args.demos
        else contenders.CONTENDERS
        if args.contenders
        else SCENARIOS
    )
    names = args.names or [t.name for t in default]
    targets = tuple(resolve(names=names))
    plan = Plan(
        targets=targets,
        tool=args.tool,
        requests=args.requests,
        concurrency=args.concurrency,
        delay=args.delay,
        sweep=args.sweep,
        repeat=args.repeat,
        duration_s=args.duration,
        from_host=args.from_host,
        wait_timeout_s=args.wait_timeout,
        calibration=not (
            args.no_calibration
            or args.demos
            or args.published
            or all(t.kind == "demo" for t in targets)
        ),
    )
    settings = BenchSettings(
        requests=args.requests,
        concurrency=args.concurrency,
        delay=args.delay,
        tool=args.tool,
        repeat=args.repeat,
        sweep=list(args.sweep) or None,
        from_host=args.from_host,
    )
    return measure(args, out, err, plan=plan, settings=settings, tool=args.tool)


def measure(
    args: argparse.Namespace,
    out: Console,
    err: Console,
    *,
    plan: Plan | Prepare,
    settings: BenchSettings,
    tool: str,
    targets: tuple[Target, ...] = (),
    kind: str = "bench",
) -> int:
    """Preflight, lock, build, then measure a plan into a new (or resumed) run and report it.
    A `Prepare` in place of a plan makes it once the run's store exists."""
    targets = targets or (plan.targets if isinstance(plan, Plan) else ())
    with session(args, out) as docker:
        build(
            docker,
            [t.compose_file for t in targets] + [CALIBRATION.compose_file],
            args=args,
            out=out,
        )
        store = _store(docker, args, out, settings=settings, tool=tool, kind=kind)
        try:
            measure_run(docker, store, make_progress(out, err, quiet=args.quiet), plan=plan)
        except KeyboardInterrupt:
            err.print(
                f"\ninterrupted: the scenario that was up has been torn down; finished "
                f"results are in {store.path} (continue with --resume {store.run_dir.name})"
            )
            benchpage.write_report(run_dir=store.run_dir, results=store.run)
            return 130
        run = store.run
        written = benchpage.write_report(run_dir=store.run_dir, results=run)
    out.print(terminal.summary_table(results=run))
    if (demo_table := terminal.demo_table(results=run)) is not None:
        out.print(demo_table)
    out.print(f"results: {store.path}")
    for path in written:
        out.print(f"         {path}")
    return 0


def _store(
    docker: Docker,
    args: argparse.Namespace,
    out: Console,
    *,
    settings: BenchSettings,
    tool: str,
    kind: str,
) -> RunStore[Run]:
    """The run `--resume` names, or a new one."""
    if args.resume:
        store: RunStore[Run] = RunStore.resume(results_dir=args.results_dir, ref=args.resume)
        out.print(f"resuming {store.run_dir}")
        return store
    return newrun.new_store(
        docker,
        root=options.ROOT,
        results_dir=args.results_dir,
        command_line=args.command_line,
        settings=settings,
        tool=tool,
        kind=kind,
    )


def make_progress(out: Console, err: Console, *, quiet: bool) -> RunnerProgress:
    if quiet:
        return RunnerProgress(warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False))
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    )
    tasks: dict[str, TaskID] = {}

    def started(target: Target, seconds: float) -> None:
        bar.start()
        tasks[target.name] = bar.add_task(
            f"{target.name} n={target.requests} c={target.concurrency}", total=None
        )

    def finished(target: Target) -> None:
        task = tasks.pop(target.name, None)
        if task is not None:
            bar.remove_task(task)
        bar.stop()

    return RunnerProgress(
        echo=lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False),
        info=lambda line: out.print(line),
        warn=lambda line: err.print(f"[red]{line}[/red]", highlight=False),
        load_started=started,
        load_finished=finished,
    )

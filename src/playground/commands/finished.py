"""Commands on finished runs: `playground compare` and `playground report`."""

from __future__ import annotations

import argparse

from rich.console import Console

from playground import report, results
from playground.commands import options


def add_parser(sub) -> None:
    compare = sub.add_parser(
        "compare", help="compare two runs side by side", parents=[options.results_dir()]
    )
    compare.add_argument("run_a")
    compare.add_argument("run_b")
    compare.set_defaults(handler=cmd_compare)

    rep = sub.add_parser(
        "report",
        help="write a run's report again from its results.json",
        parents=[options.results_dir()],
    )
    rep.add_argument("run", nargs="?", default="latest")
    rep.set_defaults(handler=cmd_report)


def cmd_compare(args: argparse.Namespace, out: Console, err: Console) -> int:
    a = results.load(results.resolve_run(args.results_dir, args.run_a))
    b = results.load(results.resolve_run(args.results_dir, args.run_b))
    out.print(report.compare_table(a=a, b=b))
    return 0


def cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    run_dir = results.resolve_run(args.results_dir, args.run)
    data = results.load(run_dir)
    for path in report.write_report(run_dir=run_dir, results=data):
        out.print(str(path))
    return 0

"""How long the model's odds take (a benchmark, not a test): one row's probabilities
(`playground predict TARGET`: its default draws and the threshold's bisection) and the default
11 x 11 map (`playground predict TARGET --map`), each timed on this machine, wall and CPU
(this process and its worker processes, user + system), with the load average before each.

    .venv/bin/python tests/bench_predict.py [TARGET] [--jobs N] [--results-dir DIR]

The runs are kept in the results directory (`results/` by default), each under its run id.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import time
from pathlib import Path

from playground.cli import main


def cpu_s() -> float:
    """CPU seconds of this process and of the worker processes it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def report(what: str, argv: list[str], results: Path) -> None:
    """One `playground predict`, timed: its run id, wall and CPU seconds, and the load average
    before it."""
    load = os.getloadavg()[0]
    wall, cpu = time.monotonic(), cpu_s()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["predict", "--results-dir", str(results), "--json", *argv])
    if code != 0:
        raise SystemExit(f"playground predict {' '.join(argv)}: exit {code}")
    wall, cpu = time.monotonic() - wall, cpu_s() - cpu
    run = json.loads(printed.getvalue())["run_id"]
    command = " ".join(["playground predict", *argv])
    print(f"{what}: {wall:.1f} s wall, {cpu:.1f} s CPU, load {load:.1f} before ({run}: {command})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default="gunicorn-threads")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--results-dir", type=Path, default=Path("results"))
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; --jobs {args.jobs}", file=sys.stderr)
    jobs = ["--jobs", str(args.jobs)]
    report("one row's probabilities", [args.target, *jobs], args.results_dir)
    report("the 11 x 11 map", [args.target, "--map", *jobs], args.results_dir)

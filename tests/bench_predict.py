"""How long the model's odds take (not a test): one row's probabilities (`playground predict
TARGET`, its default draws and the threshold's bisection) and the default 11 x 11 map
(`playground predict TARGET --map`), each timed on this machine.

    .venv/bin/python tests/bench_predict.py [TARGET]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from playground.cli import main


def timed(argv: list[str]) -> float:
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as results:
        code = main(["predict", "--results-dir", results, "--json", *argv])
    if code != 0:
        raise SystemExit(f"playground predict {' '.join(argv)}: exit {code}")
    return time.monotonic() - started


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "gunicorn-threads"
    row = timed([target])
    grid = timed([target, "--map"])
    print(f"{Path(__file__).name}: {target}", file=sys.stderr)
    print(f"one row's probabilities: {row:.1f} s", file=sys.stderr)
    print(f"the 11 x 11 map: {grid:.1f} s", file=sys.stderr)

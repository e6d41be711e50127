"""What the subcommands share: where things are, argument types, and parent parsers for the
options several commands take (results dir, quiet, no-build, wait timeout, resume)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias, TypeVar

from playground.core.containerstate import WAIT_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_RESULTS = ROOT / "results"
# What each command's `add_parser` is given: `ArgumentParser.add_subparsers()`.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
N = TypeVar("N", int, float)


def positive_int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"concurrencies must be whole numbers >= 1, got {text!r}")
    return values


def positive(kind: Callable[[str], N]) -> Callable[[str], N]:
    """A number above 0 (a float may also be 0: a delay of 0 is a valid request)."""
    zero_allowed: bool = kind is float

    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not value > 0 and not (zero_allowed and value == 0):
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value

    return parse


def fraction(text: str) -> float:
    """A share of one core: above 0 (the delays divide by it) and at most 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {text!r}")
    return value


def results_dir() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--results-dir",
        type=Path,
        default=DEFAULT_RESULTS,
        help="where runs are kept (default: results/)",
    )
    return parent


def session() -> argparse.ArgumentParser:
    """The options of every command that brings scenarios up."""
    parent = argparse.ArgumentParser(add_help=False, parents=[results_dir()])
    parent.add_argument("--no-build", action="store_true", help="do not build the images first")
    parent.add_argument("-q", "--quiet", action="store_true", help="no progress, for CI logs")
    parent.add_argument(
        "--wait-timeout",
        type=positive(int),
        default=WAIT_TIMEOUT_S,
        help=f"seconds a scenario may take to become healthy before it is "
        f"recorded as failed with its last log lines "
        f"(default {WAIT_TIMEOUT_S})",
    )
    return parent


def resumable() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--resume", metavar="RUN", help="continue an interrupted run (a run id, 'latest' or a path)"
    )
    return parent


def pinnable() -> argparse.ArgumentParser:
    """The option of the commands that load with ab or wrk: cores of its own for the app."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--pin-cpus",
        action="store_true",
        help="the app's containers on the upper half of the CPUs, the load "
        "generator and the rest on the lower half (steadier repeats; "
        "see docs/reading-the-numbers.md)",
    )
    return parent

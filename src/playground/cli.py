"""`playground`: run the comparison, list what can run, compare two runs, redraw a report.

Each subcommand lives in its own module of `playground.commands` and adds itself with
``add_parser(subparsers)``; this module only puts them together and turns a failure into a
one-line message and an exit code.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from rich.console import Console

from playground.commands import finished, kinds, listing, record
from playground.core.errors import PlaygroundError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="playground",
        description="Bring each scenario up, load it, sample its threads, and report.",
    )
    sub = parser.add_subparsers(dest="command")
    # In the order `playground --help` lists them: each kind's commands, then the rest.
    for add_parser in (
        *kinds.add_parsers(),
        record.add_parser,
        listing.add_parser,
        finished.add_parser,
    ):
        add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(words)
    # The command line a run records, as the reader typed it (also when called as a function).
    args.command_line = "playground " + shlex.join(words)
    # soft_wrap: a printed command stays on one line, so it can be copied and pasted.
    out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args, out, err)
        return code
    except PlaygroundError as exc:
        # The one place a failure the user can act on becomes a message and an exit code;
        # anything else is a bug and keeps its traceback.
        err.print(f"[red]playground: {exc}[/red]", highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("\ninterrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())

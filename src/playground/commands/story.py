"""`playground story`: the war story's modes through one incident at the third party (the
command itself lives with the story, in `playground.story.cli`)."""

from __future__ import annotations

import argparse

from rich.console import Console

from playground.commands import options
from playground.story import cli as storycli


def add_parser(sub) -> None:
    storycli.add_parser(sub)
    sub.choices["story"].set_defaults(handler=cmd_story)


def cmd_story(args: argparse.Namespace, out: Console, err: Console) -> int:
    return storycli.cmd_story(
        args, out, err, root=options.ROOT, default_results=options.DEFAULT_RESULTS
    )

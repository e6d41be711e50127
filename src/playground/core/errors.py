"""The errors a user can act on. The CLI turns each into one line and an exit code (in
`playground.cli`, the one place that does); anything else is a bug and keeps its traceback."""

from __future__ import annotations


class PlaygroundError(Exception):
    """A failure the user can act on: the CLI prints its message and exits with `exit_code`."""

    exit_code = 2


class UsageError(PlaygroundError):
    """Bad input on the command line (an unknown target, settings that cannot work)."""

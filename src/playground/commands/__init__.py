"""The subcommands of `playground`, one module each.

Every module exposes ``add_parser(subparsers)``, which adds its subcommand and sets the
function that runs it (``handler(args, out, err) -> exit code``); `playground.cli` calls it
once per module in ``COMMANDS``. A new subcommand is a new module here and one line there.
"""

"""The subcommands of `playground`, one module each.

Every module exposes ``add_parser(subparsers)``, which adds its subcommand and sets the
function that runs it (``handler(args, out, err) -> exit code``); `playground.cli` calls it
for each kind's commands in the registry of kinds (``kinds.KINDS``), then for the commands on
finished runs. A new kind of run is a new module here and one line in the registry.
"""

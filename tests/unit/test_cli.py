"""The command line: bad input is a clear argparse error, never a traceback."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import pytest

from playground import cli, commands
from playground.commands import kinds
from playground.core.errors import UsageError


@pytest.mark.parametrize("value", ["0", "-0.5", "1.5", "nan", "x"])
def test_scale_utilisation_out_of_range_is_a_clear_error(value, capsys):
    # 0 used to pass the parser and end in a ZeroDivisionError once the probe had run.
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["scale", "--utilisation", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--utilisation" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["0.25", "1"])
def test_scale_utilisation_in_range_is_accepted(value):
    args = cli.build_parser().parse_args(["scale", "--utilisation", value])
    assert args.utilisation == float(value)


@pytest.mark.parametrize("name", ["gevent-pywsgi@0", "gevent-pywsgi@x", "gevent-pywsgi@"])
def test_scale_refuses_a_bad_concurrency_after_a_name_in_one_line(name, capsys):
    """NAME@C,... with a C that is no concurrency: one line and exit code 2 before anything
    runs (it was a ValueError, and the user saw a traceback)."""
    assert cli.main(["scale", name]) == 2
    err = capsys.readouterr().err
    assert (
        err.strip().startswith("playground: gevent-pywsgi@") and len(err.strip().splitlines()) == 1
    )
    assert "Traceback" not in err


def test_scale_settings_refuse_a_zero_utilisation():
    from playground.bench.scale import scale_settings

    with pytest.raises(UsageError, match="utilisation"):
        scale_settings(cpu_ms=2.0, sweep=(100,), utilisation=0, probe="gunicorn-gevent")


def _command_modules() -> dict[str, set[str]]:
    """Every module of playground.commands with an `add_parser`, by name, with the subcommands
    it adds (each on a parser of its own)."""
    found = {}
    for info in pkgutil.iter_modules(commands.__path__, prefix="playground.commands."):
        module = importlib.import_module(info.name)
        if callable(getattr(module, "add_parser", None)):
            sub = argparse.ArgumentParser().add_subparsers()
            module.add_parser(sub)
            found[info.name] = set(sub.choices)
    return found


def test_every_command_is_one_module_with_add_parser():
    """The CLI's subcommands are the ones the command modules add, every one of them (each
    kind's from its line in the registry), and each has a handler."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    modules = _command_modules()
    assert all(modules.values())
    assert set(sub.choices) == set().union(*modules.values())
    for kind in kinds.KINDS:
        assert kind.commands and set(kind.commands) <= set(modules), kind.name
    for name, command in sub.choices.items():
        assert callable(command.get_default("handler")), name


@pytest.mark.parametrize("command", ["run", "scale", "faults", "swarm"])
def test_commands_that_bring_scenarios_up_share_their_options(command):
    args = cli.build_parser().parse_args(
        [command, "--no-build", "-q", "--results-dir", "/tmp/x", "--wait-timeout", "30"]
    )
    assert (args.no_build, args.quiet, str(args.results_dir), args.wait_timeout) == (
        True,
        True,
        "/tmp/x",
        30,
    )


def test_no_command_prints_the_help(capsys):
    assert cli.main([]) == 2
    assert "usage: playground" in capsys.readouterr().out

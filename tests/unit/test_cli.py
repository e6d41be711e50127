"""The command line: bad input is a clear argparse error, never a traceback."""

from __future__ import annotations

import pytest

from playground import cli


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

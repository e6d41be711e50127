"""pinning.py and --pin-cpus: which cores go to the app, and the load generator's own."""

from __future__ import annotations

import pytest

from playground.cli import main
from playground.core.compose import Docker
from playground.core.errors import UsageError
from playground.core.pinning import CpuPinning
from tests.conftest import ROOT


@pytest.mark.parametrize("ncpu, app, rest", [(2, "1", "0"), (4, "2-3", "0-1"), (3, "1-2", "0")])
def test_the_app_gets_the_upper_half(ncpu, app, rest):
    pinning = CpuPinning.halves(ncpu)
    assert (pinning.app_cpus, pinning.rest_cpus) == (app, rest)


def test_one_cpu_cannot_be_split():
    with pytest.raises(UsageError, match="at least 2 CPUs; Docker reports 1"):
        CpuPinning.halves(1)


def test_the_load_generator_runs_on_the_other_half():
    docker = Docker(root=ROOT, pinning=CpuPinning.halves(2))
    argv = docker.loadgen_argv(network="n", tool_argv=["ab", "-V"])
    assert argv[argv.index("--cpuset-cpus") + 1] == "0"
    assert argv.index("--cpuset-cpus") < argv.index("flask-playground/loadgen")
    assert "--cpuset-cpus" not in Docker(root=ROOT).loadgen_argv(network="n", tool_argv=["ab"])


def test_pinning_the_host_path_is_a_clear_error(capsys):
    code = main(["run", "gevent-pywsgi", "--pin-cpus", "--from-host", "--no-build"])
    err = capsys.readouterr().err
    assert code == 2 and "--pin-cpus pins the load generator's container" in err

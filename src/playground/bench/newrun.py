"""A new bench run: its store, its header carrying the command, the machine, the load tool's
version and the settings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from playground.core import environment, runstore
from playground.core import load as loadmod
from playground.core.compose import Docker
from playground.core.results import BenchSettings, Run
from playground.core.runstore import RunStore


def new_store(
    docker: Docker,
    *,
    root: Path,
    results_dir: Path,
    command_line: str,
    settings: BenchSettings,
    tool: str,
    kind: str,
) -> RunStore[Run]:
    """A new run's store under `results_dir`, the environment read from the checkout at
    `root` and from Docker, the load tool's version asked of its image."""
    version = docker.run(
        docker.loadgen_argv(network="none", tool_argv=loadmod.TOOLS[tool].version_command()),
        check=False,
        quiet=True,
    )
    run = Run(
        kind=kind,
        run_id=runstore.new_run_id(),
        started_at=runstore.now(),
        command=command_line,
        environment=environment.collect(
            root=root,
            docker=docker,
            tool=tool,
            tool_version=loadmod.tool_version(stdout=version.stdout + version.stderr),
        ),
        settings=(
            replace(settings, extra={"pin_cpus": docker.pinning.describe()})
            if docker.pinning
            else settings
        ),
    )
    return RunStore.create_run(results_dir=results_dir, run=run)

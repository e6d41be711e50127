"""A session of a command that brings scenarios up: the SIGTERM handler, Docker's preflight,
the results directory's lock, and the image build, in that order."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rich.console import Console

from playground.commands.options import ROOT
from playground.core import runstore
from playground.core.compose import LOADGEN_SERVICES, ComposeFiles, Docker
from playground.core.errors import UsageError
from playground.core.pinning import CpuPinning
from playground.story import delayproxy


def interrupt_on_sigterm() -> None:
    """A SIGTERM ends a session as cleanly as a Ctrl-C: the scenario up is torn down."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def docker_for(out: Console, *, quiet: bool) -> Docker:
    """Docker, printing every command it runs (unless quiet) the way a reader would type it."""
    return Docker(
        root=ROOT,
        echo=(lambda line: None)
        if quiet
        else (lambda line: out.print(f"[dim]$ {line}[/dim]", highlight=False)),
    )


@contextmanager
def session(args: argparse.Namespace, out: Console) -> Iterator[Docker]:
    """From the start a SIGTERM is a Ctrl-C; Docker must answer; one runner at a time."""
    interrupt_on_sigterm()
    docker = docker_for(out, quiet=args.quiet)
    if getattr(args, "pin_cpus", False) and getattr(args, "from_host", False):
        raise UsageError(
            "--pin-cpus pins the load generator's container; with --from-host "
            "the load runs on this host (use taskset -c 0 ab ... by hand)"
        )
    docker.preflight()
    delayproxy.remove_leftovers(docker, lambda line: out.print(line, highlight=False))
    if getattr(args, "pin_cpus", False):
        docker.pinning = CpuPinning.halves(docker.cpus())
    with runstore.exclusive(args.results_dir):
        yield docker


def build(
    docker: Docker,
    files: Sequence[ComposeFiles],
    *,
    args: argparse.Namespace,
    out: Console | None = None,
    generators: Sequence[str] = LOADGEN_SERVICES,
) -> None:
    """Build the images the files need, unless --no-build; `out` announces it."""
    if args.no_build:
        return
    if out is not None:
        out.print("building images (docker compose build)..." if not args.quiet else "", end="")
    docker.build(sorted(set(files), key=str), generators=generators)
    if out is not None:
        out.print("")

"""A fault session: one compose file, up, with a clock shared by its probers and its marks,
and the settings every fault reads."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from playground.core.compose import Docker, shown
from playground.core.errors import UsageError
from playground.core.target import Target
from playground.core.tools.ab import ab_command
from playground.faults.containers import ServerState, server_state
from playground.faults.probe import Prober, burst
from playground.faults.results import Burst, FaultSettings


@dataclass
class FaultSession:
    """One compose file, up, with a clock shared by its probers and its marks."""

    docker: Docker
    compose_file: tuple[str, ...]  # the scenario's file and any overrides (-f ... -f ...)
    targets: tuple[Target, ...]
    settings: FaultSettings
    echo: Callable[[str], None] = lambda line: None
    t0: float = field(default_factory=time.monotonic)
    marks: list[dict[str, float | str]] = field(default_factory=list)  # faults.json's form
    commands: list[str] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def mark(self, label: str) -> float:
        t = self.now()
        self.marks.append({"t": round(t, 3), "label": label})
        return t

    def record(self, *args: str) -> None:
        """Keep `docker compose -f FILE ARGS` among the commands a reader can repeat."""
        self.commands.append(shown(self.docker.compose(self.compose_file, *args)))

    def record_load(self, *, concurrency: Callable[[Target], int], delay: float) -> None:
        """What the prober does, as a reader would do it from the host."""
        for t in self.targets:
            url = t.host_url(delay=delay) or ""
            argv = ab_command(
                url=url, requests=100_000, concurrency=concurrency(t), timeout_s=60, time_limit_s=60
            )
            self.commands.append(shown(argv) + " &")

    def services(self) -> list[str]:
        return self.docker.services(self.compose_file)

    def states(self, *, skip: str | None = None) -> dict[str, ServerState]:
        return {
            s: server_state(docker=self.docker, compose_file=self.compose_file, service=s)
            for s in self.services()
            if s != skip
        }

    def probers(self, *, delay: float, concurrency: Callable[[Target], int]) -> list[Prober]:
        return [
            Prober(
                host="127.0.0.1",
                port=probe_port(t),
                concurrency=concurrency(t),
                delay=delay,
                timeout_s=self.settings.probe_timeout_s,
                clock=self.now,
            )
            for t in self.targets
        ]

    def burst(self, target: Target) -> Burst:
        return burst(
            host="127.0.0.1",
            port=probe_port(target),
            k=target.concurrency,
            delay=self.settings.delay,
            timeout_s=self.settings.probe_timeout_s,
        )


@contextmanager
def running(probers: Sequence[Prober]) -> Iterator[None]:
    started: list[Prober] = []
    try:
        for p in probers:
            started.append(p.__enter__())
        yield
    except BaseException:
        for p in started:
            p.stop(cancel=True)
        raise


def sleep_until(session: FaultSession, t: float) -> None:
    remaining = t - session.now()
    if remaining > 0:
        time.sleep(remaining)


def probe_port(target: Target) -> int:
    """The port the prober sends to: the target's published one on 127.0.0.1."""
    if target.host_port is None:
        raise UsageError(f"{target.name} has no published port to probe")
    return target.host_port

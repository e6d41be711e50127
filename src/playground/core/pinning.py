"""`--pin-cpus`: the app on cores of its own, the load generator and the rest on the others.

On a 2-core machine ab and the app share both cores, so a run can move by a few per cent with
whatever else the scheduler puts beside the app. Pinned, the app's services (the ones the
report samples: the Flask app's container) get the upper half of the cores and everything
else (the load generator, nginx in front, slow_api, PostgreSQL) the lower half. What the
tutorial teaches does not depend on it: every mode waits on I/O and uses a fraction of a core;
the app's workers merely share its cores, as they do on a small VM. docs/reading-the-numbers.md
says what it changed on this project's machine.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.errors import UsageError


@dataclass(frozen=True)
class CpuPinning:
    app_cpus: str  # a cpuset, as `docker update --cpuset-cpus` takes it: "1", "2-3"
    rest_cpus: str

    @classmethod
    def halves(cls, ncpu: int) -> CpuPinning:
        """The lower half of the machine's cores for the load, the upper half for the app."""
        if ncpu < 2:
            raise UsageError(f"--pin-cpus needs at least 2 CPUs; Docker reports {ncpu}")
        half = ncpu // 2
        return cls(app_cpus=_span(half, ncpu - 1), rest_cpus=_span(0, half - 1))

    def describe(self) -> str:
        return (
            f"app services on CPU {self.app_cpus}; the load generator, upstream and "
            f"everything else on CPU {self.rest_cpus}"
        )


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"

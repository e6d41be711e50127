"""The scale profile's settings: which modes it sweeps, how far, and the delay per concurrency.

`playground scale` sweeps concurrency up to 10,000 with delays long enough that CPU is not the
limit: a probe first measures the app's CPU per request (c=200, all the app's processes); each
concurrency then gets the delay that keeps the ideal c / delay at a fraction (`--utilisation`) of
what one core can serve, so a shortfall shows the server model, not a busy CPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from playground.bench.plan import Plan
from playground.bench.runner import Runner
from playground.core.errors import PlaygroundError, UsageError
from playground.core.results import Run, ScaleRunSettings, ScaleSettings
from playground.core.runstore import RunStore
from playground.core.scenarios import resolve
from playground.core.target import Target

# Every serving mode that could hold many requests, up to c=10,000.
SCALE_DEFAULT = (
    "gevent-pywsgi",
    "gunicorn-gevent",
    "uwsgi-gevent",
    "nginx-gunicorn",
    "nginx-uwsgi",
    "devserver-threads",
    "gunicorn-threads",
    "uwsgi-threads",
)
SCALE_SWEEP = (100, 1000, 3000, 10000)
SCALE_UTILISATION = 0.25
SCALE_PROBE = "gunicorn-gevent"
MAX_SCALE_DELAY_S = 600.0  # the scale overrides raise MAX_DELAY to this


def scale_settings(
    *, cpu_ms: float | None, sweep: tuple[int, ...], utilisation: float, probe: str
) -> ScaleSettings:
    """The delay per concurrency that keeps c / delay at `utilisation` of one core."""
    if not cpu_ms:
        raise PlaygroundError(
            f"the probe ({probe}) measured no CPU per request; cannot pick delays"
        )
    if not 0 < utilisation <= 1:
        raise UsageError(f"utilisation must be above 0 and at most 1, got {utilisation:g}")
    rate = utilisation * 1000 / cpu_ms
    # By c as JSON keys it (the file's form, read back the same).
    delays = {str(c): min(MAX_SCALE_DELAY_S, max(1.0, math.ceil(2 * c / rate) / 2)) for c in sweep}
    return ScaleSettings(
        probe=probe, cpu_ms_per_request=cpu_ms, utilisation=utilisation, rate=rate, delays=delays
    )


@dataclass(frozen=True)
class ScaleSweep:
    """The sweep's plan, made once the run's store exists: the probe first (unless a resumed
    run has it), whose CPU per request sets the delay at each concurrency."""

    probe_scenario: str  # whose CPU per request sets the delays
    targets: tuple[Target, ...]
    sweep: tuple[int, ...]  # what was asked for every target
    own: dict[str, tuple[int, ...]]  # NAME@C,...: a target's own concurrencies
    utilisation: float
    repeat: int
    stop_below: float | None
    wait_timeout_s: int
    from_host: bool
    overrides_dir: Path

    @property
    def probe(self) -> Target:
        """The probe: the scenario at c=200, a measurement of the machine."""
        (scenario,) = resolve(names=[self.probe_scenario])
        return replace(
            scenario,
            name=f"probe-{self.probe_scenario}",
            kind="probe",
            requests=1000,
            concurrency=200,
            delay=0.5,
        )

    def __call__(self, store: RunStore[Run], runner_for: Callable[[Plan], Runner]) -> Plan:
        run = store.run
        settings = run.settings
        if not isinstance(settings, ScaleRunSettings):
            raise UsageError(
                f"run {run.run_id} is not a scale run: resume it with `playground run`"
            )
        scale = settings.scale
        if scale is None:
            probe = Plan(
                targets=(self.probe,),
                overrides_dir=self.overrides_dir,
                calibration=False,
                wait_timeout_s=self.wait_timeout_s,
            )
            runner_for(probe).run(None)
            # The probe is a measurement of the machine, not a point of the sweep.
            entry = run.set_probe(self.probe.name)
            every = sorted({*self.sweep, *(c for cs in self.own.values() for c in cs)})
            scale = scale_settings(
                cpu_ms=entry.cpu_ms_per_request,
                sweep=tuple(every),
                utilisation=self.utilisation,
                probe=self.probe_scenario,
            )
            run.settings = replace(settings, scale=scale)
            store.save()
        return Plan(
            targets=self.targets,
            sweep=self.sweep,
            sweeps=tuple(self.own.items()),
            delays=tuple((int(c), d) for c, d in scale.delays.items()),
            repeat=self.repeat,
            overrides_dir=self.overrides_dir,
            stop_below=self.stop_below,
            calibration=False,
            wait_timeout_s=self.wait_timeout_s,
            from_host=self.from_host,
        )

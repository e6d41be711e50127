"""The scale profile's settings: which modes it sweeps, how far, and the delay per concurrency.

`playground scale` sweeps concurrency up to 10,000 with delays long enough that CPU is not the
limit: a probe first measures the app's CPU per request (c=200, all the app's processes); each
concurrency then gets the delay that keeps the ideal c / delay at a fraction (`--utilisation`) of
what one core can serve, so a shortfall shows the server model, not a busy CPU.
"""

from __future__ import annotations

import math

from playground.core.errors import PlaygroundError, UsageError
from playground.core.results import ScaleSettings

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

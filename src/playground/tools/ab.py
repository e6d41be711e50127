"""ApacheBench's command line: every `ab ...` the playground runs or shows is built here.

ab's flags, in the order they are written: ``-q`` (no progress lines), ``-r`` (keep going after
socket errors: without it the first reset or refused connection ends the run with no report),
``-t SECONDS`` (a time limit; it sets ab's request cap to 50,000, so ``-n`` comes after it and
lowers that cap again), ``-n`` requests, ``-c`` concurrency, ``-s SECONDS`` (whole seconds, and
beware: it limits the *inactivity of the whole run*, so when no connection makes progress for
that long ab exits without a report), ``-g PATH`` (ab's per-request file), then the URL.
"""

from __future__ import annotations

import math


def ab_command(
    *,
    url: str,
    requests: int,
    concurrency: int,
    timeout_s: float,
    time_limit_s: float | None = None,
    per_request_path: str | None = None,
    quiet: bool = False,
) -> list[str]:
    """``ab [-q] -r [-t SECONDS] -n N -c C -s TIMEOUT [-g PATH] URL`` (seconds rounded up)."""
    argv = ["ab", *(["-q"] if quiet else []), "-r"]
    if time_limit_s is not None:
        argv += ["-t", str(math.ceil(time_limit_s))]
    argv += ["-n", str(requests), "-c", str(concurrency), "-s", str(math.ceil(timeout_s))]
    if per_request_path is not None:
        argv += ["-g", per_request_path]
    return [*argv, url]

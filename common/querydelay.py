"""The one rule for the `delay` query parameter, shared by every program of the playground.

`delay` is a plain decimal number of seconds (``1``, ``0.5``, ``.25``), given at most once,
between 0 and ``MAX_DELAY`` (60 s unless the environment says otherwise). Anything else is
refused with a one-line reason, so a typo gets a 400 that says why instead of a 500 or a
worker that sleeps for a year.
"""

from __future__ import annotations

import math
import os
import re

DEFAULT_DELAY = 1.0
# Seconds an app waits for the upstream (or the database) on top of the delay it asked for:
# past that the answer is late and the client gets a 504 (or 503) instead of a worker stuck
# forever. Every app's timeout is `delay + UPSTREAM_GRACE_S`.
UPSTREAM_GRACE_S = float(os.environ.get("UPSTREAM_GRACE", "5"))

# Digits with an optional fraction, ASCII only: no signs, exponents, "nan", "inf", underscores
# or non-ASCII digits, all of which Python's float() would otherwise accept.
_DECIMAL = re.compile(r"(?:[0-9]{1,12}(?:\.[0-9]{0,9})?|\.[0-9]{1,9})", re.ASCII)


class DelayError(ValueError):
    """The `delay` parameter cannot be used; the message is the reason, one line."""


def max_delay() -> float:
    """The largest delay this process accepts, from env ``MAX_DELAY`` (seconds)."""
    return float(os.environ.get("MAX_DELAY", "60"))


def _shown(raw: str) -> str:
    """A short, printable rendering of what the client sent, safe to echo in a reason."""
    text = raw if len(raw) <= 40 else raw[:37] + "..."
    return ascii(text)


def parse_delay(values: list[str], *, limit: float | None = None) -> float:
    """Return the delay in seconds from every value given for ``delay`` in the query string.

    ``values`` is the list of all values (``request.args.getlist("delay")``): none means the
    default of 1 s, more than one is refused rather than silently picking one.
    """
    limit = max_delay() if limit is None else limit
    if not values:
        return DEFAULT_DELAY
    if len(values) > 1:
        raise DelayError(f"delay was given {len(values)} times; give it once")
    raw = values[0]
    if not _DECIMAL.fullmatch(raw):
        raise DelayError(
            f"delay must be a plain number of seconds between 0 and {limit:g}, got {_shown(raw)}"
        )
    delay = float(raw)
    if not math.isfinite(delay) or delay > limit:
        raise DelayError(f"delay must be at most {limit:g} seconds (MAX_DELAY), got {_shown(raw)}")
    return delay


def format_delay(seconds: float) -> str:
    """``seconds`` written the way this rule accepts it, to pass a delay on to slow_api.

    Not ``f"{seconds:g}"``: that writes 0.00005 as ``5e-05``, an exponent, which the rule
    refuses, so a valid request became a 502 (found by the fuzz). A plain decimal with the
    rule's at most 9 decimals instead; anything finer rounds to the nearest nanosecond.
    """
    text = f"{seconds:.9f}".rstrip("0").rstrip(".")
    return text or "0"

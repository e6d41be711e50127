"""Docker's health checks, which keep asking the app for a page all through a run.

Every story's compose files give the app's container and nginx's (and HAProxy's, where a remedy
puts it in) a `healthcheck:` that sends one real request, `GET /?delay=0`: the app's through
its own port (common/healthcheck.py), nginx's and HAProxy's through them to the app. Docker runs
a check `interval` after the previous one ended, and gives up on it after `timeout` (moby's
daemon/health.go); the check's own client may give up sooner (healthcheck.py's socket timeout).
So a check is a user of its own: one request at a time, asking the third party for no delay,
which during the incident is the incident's extra. In a full pool each one holds a thread and
a place in the queue like a user's request; the story's generator never sees them, but nginx's
access log and the app's timing log do (run IG measured them: a check every 2.05-2.09 s before
the incident, one every 3.7-5.5 s in it, each holding a thread for the incident's extra).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Where each service's check enters: nginx's and HAProxy's through themselves, the app's
#: straight to its port (the kernel's queue), by the compose services' names.
ENTRIES = {"ingress": "nginx", "haproxy": "haproxy", "flask_app": "app"}
#: common/healthcheck.py's TIMEOUT_S: its socket gives up on connecting or on the answer then.
CHECK_PY_TIMEOUT_S = 5.0
#: What a check takes beyond its request from the moment the previous one ended: Docker
#: starting the check's process in the container. Measured in run IG (20261204-204946-story,
#: nginx's access log): 2.05-2.09 s from one check's end to the next one's start at nginx,
#: with an interval of 2 s, in all three repeats; the median less the interval.
EXEC_S = 0.06
#: The run that measured it, never scored.
EXEC_FIT_RUN = "20261204-204946-story"


@dataclass(frozen=True)
class Check:
    """One container's health check as the model runs it."""

    entry: str  # nginx, haproxy or app (:data:`ENTRIES`)
    interval_s: float  # from one check's end to the next one's start, less EXEC_S
    timeout_s: float  # the check gives up on its answer then (its connection closes)
    asked_s: float = 0.0  # the delay it asks the third party for (`GET /?delay=0`)

    @property
    def gap_s(self) -> float:
        """From one check's end to the next one's start: the interval and Docker's start."""
        return self.interval_s + EXEC_S


def _duration(text: str) -> float:
    """A compose duration ("2s", "1m30s", "500ms") in seconds."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6}
    parts = re.findall(r"([\d.]+)(ms|us|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a compose duration: {text!r}")
    return sum(float(n) * units[u] for n, u in parts)


def check_of(name: str, service: dict[str, Any], expand: Callable[[Any], str]) -> Check | None:
    """The check `service` runs (`expand`: the compose file's "${NAME:-default}" substitution);
    None where it has none, disables it, or is not a service whose checks reach the app."""
    spec = service.get("healthcheck")
    if name not in ENTRIES or not isinstance(spec, dict) or spec.get("disable"):
        return None
    test = spec.get("test") or []
    if not test or test == ["NONE"]:
        return None
    # Docker's defaults: 30 s apart, 30 s to answer.
    interval = _duration(expand(spec.get("interval", "30s")))
    timeout = _duration(expand(spec.get("timeout", "30s")))
    if "healthcheck.py" in " ".join(map(str, test)):
        timeout = min(timeout, CHECK_PY_TIMEOUT_S)
    return Check(entry=ENTRIES[name], interval_s=interval, timeout_s=timeout)


def _resolved(path: Path, name: str, load: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """Service `name` of the compose file at `path`, over what it `extends` (Compose's merge:
    the extending service's keys win)."""
    service = ((load(path).get("services") or {}).get(name)) or {}
    if not isinstance(service, dict):
        return {}
    base = service.get("extends")
    if not isinstance(base, dict):
        return service
    parent = path.parent / base["file"] if base.get("file") else path
    return {**_resolved(parent, base.get("service", name), load), **service}


def read(
    paths: Sequence[Path], expand: Callable[[Any], str], load: Callable[[Path], dict[str, Any]]
) -> tuple[Check, ...]:
    """The checks that reach the app, over a target's compose file and its overrides (a later
    file's `healthcheck:` replaces an earlier one's, as Compose merges them)."""
    found: dict[str, Check | None] = {}
    for path in paths:
        for name in ENTRIES:
            service = _resolved(path, name, load)
            if "healthcheck" in service:
                found[name] = check_of(name, service, expand)
    return tuple(c for c in found.values() if c is not None)

"""What an open-loop run sends and when: its settings, their check, and the schedule.

openloop.py's settings (the command line's, parsed here), checked before anything is sent, and
the schedule they fix in advance: every visit's intended start, seeded, and every reload's
wait. Nothing here sends; the same settings give the same schedule, which the model of the
incident (src/playground/predict/schedule.py) draws the same way.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

MAX_PROCESSES = 8
ARRIVALS = ("constant", "poisson")
# Who sends the schedule: the compiled sender (sender/: Rust, tokio and hyper; openloop.py fixes
# the schedule, hands it over and judges the result) or openloop.py's own asyncio loop. Through a
# failure storm the asyncio loop's work per attempt made sends late (docs/story.md).
ENGINES = ("tokio", "asyncio")


class SettingsError(ValueError):
    """The settings cannot describe a run; the message says which one and why."""


@dataclass(frozen=True)
class Phase:
    rate: float  # visits per second
    seconds: float | None  # None: until the end of the run


@dataclass(frozen=True)
class Event:
    """A request sent once at a fixed time of the run (e.g. the incident at the upstream)."""

    at: float
    method: str
    url: str


@dataclass(frozen=True)
class Watch:
    """A URL polled every second during the run (a server's status page)."""

    name: str
    url: str


@dataclass(frozen=True)
class Settings:
    url: str
    phases: tuple[Phase, ...]
    duration: float
    timeout: float
    arrival: str = "poisson"
    seed: int = 1
    refresh_delay: float = 1.0
    # Users who back off: the n-th reload waits refresh_delay x backoff^(n-1), times a jitter
    # drawn between 0.5 and 1.5 (seeded per visit and attempt: the same settings give the same
    # waits). 1 = every user reloads after the same delay, without jitter.
    refresh_backoff: float = 1.0
    max_attempts: int = 3
    events: tuple[Event, ...] = ()
    watches: tuple[Watch, ...] = ()
    # Keep the schedule and send nothing: the send lag the machine alone causes (the OS
    # waking the generator late), to set beside a real run's (docs/story.md).
    dry: bool = False
    # The visits dealt in turn to this many processes, an event loop each, started together
    # on one clock: under a storm of failures and reloads one loop's own work (hundreds of
    # connections opened and timed out a second) made sends late (docs/story.md).
    processes: int = 1
    # tokio: the compiled sender, `processes` worker threads; asyncio: this file's event loops.
    engine: str = "asyncio"

    def __post_init__(self) -> None:
        validate(self)


def validate(s: Settings) -> None:
    """Raise SettingsError with a reason for any setting that cannot describe a run."""
    if not s.url.startswith(("http://", "https://")):
        raise SettingsError(f"url must start with http:// or https://, got {s.url!r}")
    if not (math.isfinite(s.duration) and s.duration > 0):
        raise SettingsError(f"duration must be a positive number of seconds, got {s.duration}")
    if not (math.isfinite(s.timeout) and s.timeout > 0):
        raise SettingsError(f"timeout must be a positive number of seconds, got {s.timeout}")
    if not (math.isfinite(s.refresh_delay) and s.refresh_delay >= 0):
        raise SettingsError(f"refresh delay must be 0 or more seconds, got {s.refresh_delay}")
    if not (math.isfinite(s.refresh_backoff) and s.refresh_backoff >= 1):
        raise SettingsError(f"refresh backoff must be 1 or more, got {s.refresh_backoff}")
    if s.max_attempts < 1:
        raise SettingsError(
            f"max attempts must be at least 1 (1 = no refresh), got {s.max_attempts}"
        )
    if not 1 <= s.processes <= MAX_PROCESSES:
        raise SettingsError(f"processes must be 1 to {MAX_PROCESSES}, got {s.processes}")
    if s.engine not in ENGINES:
        raise SettingsError(f"engine must be one of {', '.join(ENGINES)}, got {s.engine!r}")
    if s.engine == "tokio" and not s.url.startswith("http://"):
        raise SettingsError(f"the tokio engine sends http:// only, got {s.url!r}")
    if s.arrival not in ARRIVALS:
        raise SettingsError(f"arrival must be one of {', '.join(ARRIVALS)}, got {s.arrival!r}")
    if not s.phases:
        raise SettingsError("the schedule needs at least one phase (a rate)")
    for i, p in enumerate(s.phases):
        if not (math.isfinite(p.rate) and p.rate > 0):
            raise SettingsError(f"phase {i + 1}: the rate must be above 0 visits/s, got {p.rate}")
        if p.seconds is not None and not (math.isfinite(p.seconds) and p.seconds > 0):
            raise SettingsError(f"phase {i + 1}: its length must be above 0 s, got {p.seconds}")
        if p.seconds is None and i != len(s.phases) - 1:
            raise SettingsError(f"phase {i + 1}: only the last phase may run to the end")
    fixed = sum(p.seconds or 0 for p in s.phases)
    if fixed > s.duration + 1e-9:
        raise SettingsError(f"the schedule ({fixed:g} s) is longer than the run ({s.duration:g} s)")
    for e in s.events:
        if not 0 <= e.at <= s.duration:
            raise SettingsError(f"event at {e.at:g} s is outside the run (0 to {s.duration:g} s)")
        if e.method not in ("GET", "POST", "PUT", "DELETE"):
            raise SettingsError(f"event method must be GET, POST, PUT or DELETE, got {e.method!r}")


# --- the schedule ---------------------------------------------------------------------------
def arrival_times(s: Settings) -> list[float]:
    """Every visit's intended start, in seconds from the start of the run, fixed in advance.

    Constant: evenly spaced at 1/rate. Poisson: exponential gaps at the phase's rate, from a
    seeded generator, so the same settings give the same visits. A phase's rate holds from its
    start to its end; the last phase (or one without a length) runs to the end of the run.
    """
    rng = random.Random(s.seed)
    times: list[float] = []
    start = 0.0
    for i, p in enumerate(s.phases):
        end = s.duration if p.seconds is None or i == len(s.phases) - 1 else start + p.seconds
        end = min(end, s.duration)
        if s.arrival == "constant":
            n = math.ceil((end - start) * p.rate - 1e-9)
            times.extend(start + k / p.rate for k in range(n))
        else:
            t = start + rng.expovariate(p.rate)
            while t < end:
                times.append(t)
                t += rng.expovariate(p.rate)
        start = end
        if start >= s.duration:
            break
    return times


def refresh_wait(s: Settings, *, visit: int, attempt: int) -> float:
    """How long a user waits after attempt `attempt` failed before reloading."""
    if s.refresh_backoff == 1:
        return s.refresh_delay
    jitter = random.Random(f"{s.seed}:{visit}:{attempt}").uniform(0.5, 1.5)
    return s.refresh_delay * s.refresh_backoff ** (attempt - 1) * jitter


def parse_phases(text: str) -> tuple[Phase, ...]:
    """`60` (60 visits/s for the whole run) or `60@20,120@10,60` (20 s at 60, 10 s at 120,
    then 60 to the end)."""
    phases = []
    for part in text.split(","):
        rate, _, seconds = part.strip().partition("@")
        try:
            phases.append(Phase(rate=float(rate), seconds=float(seconds) if seconds else None))
        except ValueError:
            raise SettingsError(f"schedule phase {part!r} is not RATE or RATE@SECONDS") from None
    return tuple(phases)


def parse_event(text: str) -> Event:
    at, sep, rest = text.partition(":")
    method, sep2, url = rest.partition(":")
    try:
        if sep and sep2 and url:
            return Event(at=float(at), method=method.upper(), url=url)
    except ValueError:
        pass
    raise SettingsError(f"event {text!r} is not SECONDS:METHOD:URL")


def parse_watch(text: str) -> Watch:
    name, sep, url = text.partition("=")
    if not sep or not name or not url:
        raise SettingsError(f"watch {text!r} is not NAME=URL")
    return Watch(name=name, url=url)

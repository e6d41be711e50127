"""What the story runs: its four modes, its numbers, and the generator's command line.

The incident behind the uWSGI demo, scaled down to this machine's 2 cores. Its ratios:
640 threads for 300 requests/s, a third of them busy normally, a 2 s response during the
incident (300 x 2 = 600 in flight: the pool nearly full). Scaled by 5: 128 threads (2
processes, one per core, x 64) for 60 visits/s. A third busy normally is 128 / 3 / 60 = 0.71 s
per request, so the upstream normally answers in 0.7 s; during the incident it takes 2 s
(60 x 2 = 120 of 128 threads). The gevent modes get the same 2 processes with 1000 greenlets
each. Users give up after a few seconds (4 s), wait 1 s and reload, up to 3 attempts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from playground.compose import LOADGEN_IMAGE
from playground.load import AB_MAX_CONCURRENCY

OPENLOOP = "/usr/local/bin/openloop.py"
STATS_PORT = 1717
STUB_STATUS_PORT = 8081
APP_PORT = 3000
API_PORT = 4000


@dataclass(frozen=True)
class Mode:
    name: str
    compose_file: str
    pool: str  # "threads" (a fixed pool) or "gevent"
    server: str  # "uwsgi" or "gunicorn"

    @property
    def project(self) -> str:
        return "story-" + self.name

    @property
    def network(self) -> str:
        return f"{self.project}_default"


MODES = (
    Mode("uwsgi-threads", "story/uwsgi-threads.yml", "threads", "uwsgi"),
    Mode("uwsgi-gevent", "story/uwsgi-gevent.yml", "gevent", "uwsgi"),
    Mode("gunicorn-threads", "story/gunicorn-threads.yml", "threads", "gunicorn"),
    Mode("gunicorn-gevent", "story/gunicorn-gevent.yml", "gevent", "gunicorn"),
)
BY_NAME = {m.name: m for m in MODES}


class StoryError(ValueError):
    """Settings that cannot make a story; the message says which and why."""


@dataclass(frozen=True)
class StorySettings:
    rate: float = 60.0  # visits per second, the same before, during and after
    normal_delay: float = 0.7  # seconds the third party takes normally
    incident_delay: float = 2.0  # ... and during the incident
    before_s: float = 20.0  # normal load before the incident
    incident_s: float = 30.0
    after_s: float = 40.0  # normal load after it: time to recover
    timeout: float = 4.0  # a user gives up after this long
    refresh_delay: float = 1.0
    max_attempts: int = 3  # the first included; 1 = nobody refreshes
    arrival: str = "poisson"
    seed: int = 1
    workers: int = 2
    threads: int = 64
    async_cores: int = 1000
    listen: int = 100
    # The closed loop through the same incident (ab): its connections; None = what the open
    # loop keeps in flight normally, rate x normal delay (60 x 0.7 = 42).
    ab_concurrency: int | None = None

    def __post_init__(self) -> None:
        for name in ("rate", "timeout", "incident_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise StoryError(f"{name} must be above 0, got {value}")
        for name in ("normal_delay", "before_s", "after_s", "refresh_delay"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise StoryError(f"{name} must be 0 or more, got {value}")
        if not self.incident_delay > self.normal_delay:
            raise StoryError(
                f"the incident's delay ({self.incident_delay:g} s) must be longer "
                f"than the normal one ({self.normal_delay:g} s)"
            )
        if self.incident_delay > 60:
            raise StoryError("the incident's delay must be at most 60 s (slow_api's MAX_DELAY)")
        for name in ("max_attempts", "workers", "threads", "async_cores", "listen"):
            if getattr(self, name) < 1:
                raise StoryError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.ab_concurrency is not None and not 1 <= self.ab_concurrency <= AB_MAX_CONCURRENCY:
            raise StoryError(
                f"ab_concurrency must be 1 to {AB_MAX_CONCURRENCY}, got {self.ab_concurrency}"
            )

    @property
    def closed_loop_concurrency(self) -> int:
        """ab's connections: as given, or the requests the open loop has in flight normally."""
        if self.ab_concurrency is not None:
            return self.ab_concurrency
        return max(1, round(self.rate * self.normal_delay))

    @property
    def duration(self) -> float:
        return self.before_s + self.incident_s + self.after_s

    @property
    def extra(self) -> float:
        return round(self.incident_delay - self.normal_delay, 6)

    def compose_env(self) -> dict[str, str]:
        """The STORY_* variables the story's compose files read."""
        return {
            "STORY_WORKERS": str(self.workers),
            "STORY_THREADS": str(self.threads),
            "STORY_ASYNC_CORES": str(self.async_cores),
            "STORY_LISTEN": str(self.listen),
        }

    def as_dict(self) -> dict:
        return {
            **asdict(self),
            "duration": self.duration,
            "extra": self.extra,
            "closed_loop_concurrency": self.closed_loop_concurrency,
        }


@dataclass(frozen=True)
class SweepSettings:
    """Goodput against offered load: one short constant-rate step per rate, the third party
    at a fixed delay, no incident. Users, pools and arrivals are the story's (StorySettings),
    refreshes included, so a collapse shows as goodput falling while attempts rise."""

    rates: tuple[float, ...] = (20.0, 40.0, 60.0, 80.0, 100.0)  # offered visits per second
    delay: float = 2.0  # seconds the third party takes, throughout
    warmup_s: float = 5.0  # load before the measured window (not counted)
    measure_s: float = 20.0  # the measured window
    settle_s: float = 30.0  # at most this long between steps for the servers to drain

    def __post_init__(self) -> None:
        if not self.rates:
            raise StoryError("the sweep needs at least one rate")
        for rate in self.rates:
            if not (math.isfinite(rate) and rate > 0):
                raise StoryError(f"every sweep rate must be above 0, got {rate:g}")
        if not (math.isfinite(self.delay) and 0 < self.delay <= 60):
            raise StoryError(
                f"the sweep's delay must be above 0 and at most 60 s "
                f"(slow_api's MAX_DELAY), got {self.delay:g}"
            )
        if not (math.isfinite(self.warmup_s) and self.warmup_s >= 0):
            raise StoryError(f"the sweep's warm-up must be 0 or more, got {self.warmup_s:g}")
        for name in ("measure_s", "settle_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 1):
                raise StoryError(f"the sweep's {name} must be at least 1 s, got {value:g}")

    @property
    def step_s(self) -> float:
        return self.warmup_s + self.measure_s

    def capacity(self, story: StorySettings) -> float:
        """A fixed pool's answers per second at this delay: workers x threads / delay."""
        return story.workers * story.threads / self.delay

    def as_dict(self) -> dict:
        return {**asdict(self), "rates": list(self.rates), "step_s": self.step_s}


def _num(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".") or "0"


def openloop_args(s: StorySettings, *, out: str) -> list[str]:
    """The generator's command line inside the load-generator container."""
    incident = f"{_num(s.before_s)}:POST:{incident_url(s)}"
    return [
        "python",
        OPENLOOP,
        "--url",
        f"http://ingress:8080/?delay={_num(s.normal_delay)}",
        "--rate",
        _num(s.rate),
        "--duration",
        _num(s.duration),
        "--arrival",
        s.arrival,
        "--seed",
        str(s.seed),
        "--timeout",
        _num(s.timeout),
        "--refresh-delay",
        _num(s.refresh_delay),
        "--max-attempts",
        str(s.max_attempts),
        "--at",
        incident,
        "--out",
        out,
    ]


def sweep_step_args(s: StorySettings, sweep: SweepSettings, *, rate: float, out: str) -> list[str]:
    """The generator's command line for one step of the sweep: a constant offered rate, the
    third party at the sweep's delay throughout, the story's users (refreshes included)."""
    return [
        "python",
        OPENLOOP,
        "--url",
        f"http://ingress:8080/?delay={_num(sweep.delay)}",
        "--rate",
        _num(rate),
        "--duration",
        _num(sweep.step_s),
        "--arrival",
        s.arrival,
        "--seed",
        str(s.seed),
        "--timeout",
        _num(s.timeout),
        "--refresh-delay",
        _num(s.refresh_delay),
        "--max-attempts",
        str(s.max_attempts),
        "--out",
        out,
    ]


def incident_url(s: StorySettings, *, host: str = "slow_api") -> str:
    """The control request that starts the incident at the third party."""
    return (
        f"http://{host}:{API_PORT}/control/slowdown"
        f"?extra={_num(s.extra)}&seconds={_num(s.incident_s)}"
    )


def ab_args(s: StorySettings, *, gnuplot: str) -> list[str]:
    """ab through the whole schedule: -t the story's duration (-t first: it sets -n to 50,000,
    the -n after it lowers that cap to twice what the loop could send at the normal delay),
    -c the closed loop's connections, -s 30: ab's inactivity limit, far beyond any wait."""
    c = s.closed_loop_concurrency
    cap = max(c, math.ceil(2 * c / max(s.normal_delay, 0.01) * s.duration))
    return [
        "ab",
        "-r",
        "-t",
        _num(math.ceil(s.duration)),
        "-n",
        str(cap),
        "-c",
        str(c),
        "-s",
        "30",
        "-g",
        gnuplot,
        f"http://ingress:8080/?delay={_num(s.normal_delay)}",
    ]


def loadgen_argv(
    *, network: str, out_dir: str, uid: int, gid: int, name: str, tool_argv: list[str]
) -> list[str]:
    """`docker run` for the generator on the scenario's network. --cpu-shares: when the
    2 cores are contended the generator goes first; a starved generator would measure itself
    (its self-check would catch it and mark the run invalid)."""
    return [
        "docker",
        "run",
        "--rm",
        "--name",
        name,
        "--network",
        network,
        "--cpu-shares",
        "4096",
        "--user",
        f"{uid}:{gid}",
        "--volume",
        f"{out_dir}:/out",
        LOADGEN_IMAGE,
        *tool_argv,
    ]

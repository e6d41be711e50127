"""The story's settings: the incident and its users (:class:`StorySettings`), and the sweep of
offered load (:class:`SweepSettings`).

The command line builds them (each flag's help is its field's description here), the runner
reads them, the results file keeps them (:class:`playground.incident.storyresults.StoryRun`'s ``story``
and ``sweep.settings``), and the report reads them back; a value no story can run with is
refused with a reason (:class:`StoryError`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from playground.core.errors import UsageError
from playground.core.jsonmodel import doc
from playground.core.tools.ab import AB_MAX_CONCURRENCY

#: slow_api refuses a longer delay (its MAX_DELAY).
MAX_UPSTREAM_DELAY_S = 60.0


class StoryError(UsageError):
    """Settings that cannot make a story; the message says which and why."""


@dataclass(frozen=True)
class MeasuredSplit:
    """How one measured run split gthread's connections between its workers, for the model to
    draw from (`playground predict --shares-from`): the machine a prediction is for."""

    run: str = doc("the run id the shares were measured in", "")
    front: str = doc("what connected to the workers: `nginx`, or `haproxy` between them", "nginx")
    rate: float = doc("visits per second the run offered before its incident", 60.0)
    shares: tuple[float, ...] = doc(
        "per trusted repeat, the busiest worker's share of the requests begun before the incident",
        factory=tuple,
    )

    def __post_init__(self) -> None:
        if self.front not in ("nginx", "haproxy"):
            raise StoryError(f"{self.run}: front must be nginx or haproxy, got {self.front!r}")
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise StoryError(f"{self.run}: rate must be above 0, got {self.rate}")
        if not all(math.isfinite(s) and 0 < s <= 1 for s in self.shares):
            raise StoryError(f"{self.run}: every share must be above 0 and at most 1")


@dataclass(frozen=True)
class StorySettings:
    """The incident and its users (the defaults are the war story's ratios, scaled by 5)."""

    rate: float = doc("visits per second, the same before, during and after", 60.0)
    normal_delay: float = doc("seconds the third party takes normally", 0.7)
    incident_delay: float = doc("seconds the third party takes during the incident", 2.0)
    before_s: float = doc("seconds of normal load before the incident", 20.0)
    incident_s: float = doc("seconds the incident lasts", 30.0)
    after_s: float = doc("seconds of normal load after it: time to recover", 40.0)
    timeout: float = doc("seconds a user waits before giving up", 4.0)
    refresh_delay: float = doc("seconds a user waits before reloading", 1.0)
    refresh_backoff: float = doc(
        "users who back off: each reload waits this many times longer than the one before, "
        "with jitter; 1 = everyone reloads after the refresh delay",
        1.0,
    )
    max_attempts: int = doc("attempts per visit, the first included; 1 = nobody reloads", 3)
    arrival: str = doc("`poisson` or `constant` arrivals", "poisson")
    seed: int = doc("seed of the arrivals: the same seed gives the same visits", 1)
    workers: int = doc("processes per app server", 2)
    threads: int = doc("threads per process of the thread-pool targets", 64)
    async_cores: int = doc("greenlets per process of the gevent targets", 1000)
    listen: int = doc("uWSGI's listen queue", 100)
    ab_concurrency: int | None = doc(
        "ab's connections for the closed loop; null: what the open loop keeps in flight "
        "normally, rate x normal delay"
    )
    engine: str = doc(
        "who sends the open loop's schedule: `tokio` (the generator's compiled sender) or "
        "`asyncio` (its Python event loops)",
        "tokio",
    )
    busiest_share: float | None = doc(
        "the model's only (`playground predict --busiest-share`): the share of new connections "
        "the busiest of Gunicorn's workers takes; absent: the share measured "
        "(docs/predict.md)",
        omit_none=True,
    )
    shares_from: tuple[MeasuredSplit, ...] = doc(
        "the model's only (`playground predict --shares-from`): the measured run whose "
        "busiest shares the draws take, per front; empty: the model's fit runs' "
        "(docs/predict.md)",
        factory=tuple,
        omit_empty=True,
    )
    system_seed: int | None = doc(
        "the model's only (`playground predict --system-seed`): seed of what the model draws "
        "inside the servers (which Gunicorn worker accepts, the app's retry jitter), apart "
        "from the arrivals'; absent: `seed`, the arrivals' seed",
        omit_none=True,
    )

    def __post_init__(self) -> None:
        for name in ("rate", "timeout", "incident_s"):
            if not (math.isfinite(value := getattr(self, name)) and value > 0):
                raise StoryError(f"{name} must be above 0, got {value}")
        for name in ("normal_delay", "before_s", "after_s", "refresh_delay"):
            if not (math.isfinite(value := getattr(self, name)) and value >= 0):
                raise StoryError(f"{name} must be 0 or more, got {value}")
        if not (math.isfinite(self.refresh_backoff) and self.refresh_backoff >= 1):
            raise StoryError(f"refresh_backoff must be 1 or more, got {self.refresh_backoff}")
        if not self.incident_delay > self.normal_delay:
            raise StoryError(
                f"the incident's delay ({self.incident_delay:g} s) must be longer "
                f"than the normal one ({self.normal_delay:g} s)"
            )
        if self.incident_delay > MAX_UPSTREAM_DELAY_S:
            raise StoryError("the incident's delay must be at most 60 s (slow_api's MAX_DELAY)")
        for name in ("max_attempts", "workers", "threads", "async_cores", "listen"):
            if (count := getattr(self, name)) < 1:
                raise StoryError(f"{name} must be at least 1, got {count}")
        if self.arrival not in ("poisson", "constant"):
            raise StoryError(f"arrival must be poisson or constant, got {self.arrival!r}")
        if self.engine not in ("tokio", "asyncio"):
            raise StoryError(f"engine must be tokio or asyncio, got {self.engine!r}")
        share = self.busiest_share
        if share is not None and not (math.isfinite(share) and 0 < share <= 1):
            raise StoryError(f"busiest_share must be above 0 and at most 1, got {share}")
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
    def extra_delay(self) -> float:
        """Seconds the incident adds to every call to the third party."""
        return round(self.incident_delay - self.normal_delay, 6)

    def compose_env(self) -> dict[str, str]:
        """The STORY_* variables the story's compose files read."""
        return {
            "STORY_WORKERS": str(self.workers),
            "STORY_THREADS": str(self.threads),
            # The remedies' larger pools (story/remedies/threads-*.yml).
            "STORY_THREADS_2X": str(2 * self.threads),
            "STORY_THREADS_4X": str(4 * self.threads),
            # One worker with the whole pool (story/remedies/one-worker.yml).
            "STORY_THREADS_ALL": str(self.workers * self.threads),
            "STORY_ASYNC_CORES": str(self.async_cores),
            "STORY_LISTEN": str(self.listen),
        }


@dataclass(frozen=True)
class SweepSettings:
    """Goodput against offered load: one short constant-rate step per rate, the third party
    at a fixed delay, no incident. Users, pools and arrivals are the story's, refreshes
    included, so a collapse shows as goodput falling while attempts rise."""

    rates: list[float] = doc(
        "offered visits per second, one step each", factory=lambda: [20.0, 40.0, 60.0, 80.0, 100.0]
    )
    delay: float = doc("seconds the third party takes, throughout the sweep", 2.0)
    warmup_s: float = doc("seconds of load before each step's measured window (not counted)", 5.0)
    measure_s: float = doc("seconds in each step's measured window", 20.0)
    settle_s: float = doc("at most this many seconds between steps for the servers to drain", 30.0)

    def __post_init__(self) -> None:
        if not self.rates:
            raise StoryError("the sweep needs at least one rate")
        for rate in self.rates:
            if not (math.isfinite(rate) and rate > 0):
                raise StoryError(f"every sweep rate must be above 0, got {rate:g}")
        if not (math.isfinite(self.delay) and 0 < self.delay <= MAX_UPSTREAM_DELAY_S):
            raise StoryError(
                f"the sweep's delay must be above 0 and at most 60 s "
                f"(slow_api's MAX_DELAY), got {self.delay:g}"
            )
        if not (math.isfinite(self.warmup_s) and self.warmup_s >= 0):
            raise StoryError(f"the sweep's warm-up must be 0 or more, got {self.warmup_s:g}")
        for name in ("measure_s", "settle_s"):
            if not (math.isfinite(value := getattr(self, name)) and value >= 1):
                raise StoryError(f"the sweep's {name} must be at least 1 s, got {value:g}")

    @property
    def step_s(self) -> float:
        return self.warmup_s + self.measure_s

    def capacity(self, story: StorySettings) -> float:
        """A fixed pool's answers per second at this delay: workers x threads / delay."""
        return story.workers * story.threads / self.delay

"""The story's results model: a `playground story` run as typed objects with one JSON form.

A story run is stored like every run (`results/<run-id>/results.json`, by
:class:`playground.results.RunStore`) and converted by the same functions as a bench run
(:mod:`playground.model`): a missing key reads as its default, a value of the wrong type is a
:class:`~playground.model.ModelError` naming where, unknown keys are kept. Its header is the
bench run's (:class:`~playground.model.RunHeader`, ``kind`` "story"); its body is the story's
settings, one :class:`StoryTarget` per target through the incident, and the sweep.

The settings are typed here too (:class:`StorySettings`, :class:`SweepSettings`): the command
line builds them, the runner reads them, the file keeps them, and the report reads them back;
a value no story can run with is refused with a reason (:class:`StoryError`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from playground.errors import UsageError
from playground.model import SCHEMA_VERSION as SCHEMA_VERSION
from playground.model import Finding, ModelError, RunHeader, _doc, _from_json
from playground.outsidemodel import IncidentCommand, OutsideTarget

#: slow_api refuses a longer delay (its MAX_DELAY).
MAX_UPSTREAM_DELAY_S = 60.0


class StoryError(UsageError):
    """Settings that cannot make a story; the message says which and why."""


@dataclass(frozen=True)
class StorySettings:
    """The incident and its users (the defaults are the war story's ratios, scaled by 5)."""

    rate: float = _doc("visits per second, the same before, during and after", 60.0)
    normal_delay: float = _doc("seconds the third party takes normally", 0.7)
    incident_delay: float = _doc("... and during the incident", 2.0)
    before_s: float = _doc("seconds of normal load before the incident", 20.0)
    incident_s: float = _doc("seconds the incident lasts", 30.0)
    after_s: float = _doc("seconds of normal load after it: time to recover", 40.0)
    timeout: float = _doc("seconds a user waits before giving up", 4.0)
    refresh_delay: float = _doc("seconds a user waits before reloading", 1.0)
    refresh_backoff: float = _doc(
        "users who back off: each reload waits this many times longer than the one before, "
        "with jitter; 1 = everyone reloads after refresh_delay",
        1.0,
    )
    max_attempts: int = _doc("attempts per visit, the first included; 1 = nobody reloads", 3)
    arrival: str = _doc("`poisson` or `constant` arrivals", "poisson")
    seed: int = _doc("seed of the arrivals: the same seed gives the same visits", 1)
    workers: int = _doc("processes per app server", 2)
    threads: int = _doc("threads per process (the thread-pool targets)", 64)
    async_cores: int = _doc("greenlets per process (the gevent targets)", 1000)
    listen: int = _doc("uWSGI's listen queue", 100)
    ab_concurrency: int | None = _doc(
        "ab's connections for the closed loop; null: what the open loop keeps in flight "
        "normally, rate x normal delay"
    )
    engine: str = _doc(
        "who sends the open loop's schedule: `tokio` (the generator's compiled sender) or "
        "`asyncio` (its Python event loops)",
        "tokio",
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
        # Imported here: playground.load reads this module's ToolFigures.
        from playground.load import AB_MAX_CONCURRENCY

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

    rates: list[float] = _doc(
        "offered visits per second, one step each", factory=lambda: [20.0, 40.0, 60.0, 80.0, 100.0]
    )
    delay: float = _doc("seconds the third party takes, throughout", 2.0)
    warmup_s: float = _doc("load before each step's measured window (not counted), s", 5.0)
    measure_s: float = _doc("each step's measured window, s", 20.0)
    settle_s: float = _doc("at most this long between steps for the servers to drain, s", 30.0)

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


@dataclass(frozen=True)
class GeneratorCheck:
    """The open-loop generator's self-check: did it keep its schedule?"""

    valid: bool = _doc("every send close enough to its intended time (see `reasons`)", False)
    reasons: list[str] = _doc("why not, one sentence each", factory=list)
    send_lag_p50_s: float | None = _doc("median lag of a send behind its intended time, s")
    send_lag_p99_s: float | None = _doc("99th percentile of the send lag, s")
    send_lag_max_s: float | None = _doc("the largest send lag, s")


@dataclass(frozen=True)
class HostSteal:
    """The host's steal time while the generator ran (/proc/stat: CPU time the hypervisor
    gave elsewhere while this machine had work), and the late sends it came with."""

    steal_s: float = _doc("CPU-seconds stolen over the run, every CPU together", 0.0)
    share: float | None = _doc("... as a share of all the machine's CPU time in the run")
    per_second_s: list[float] = _doc(
        "CPU-seconds stolen in each second of the run, from the generator's second 0",
        factory=list,
    )
    late_sends: int = _doc("sends later than the self-check's p99 bound (10 ms)", 0)
    late_sends_with_steal: int = _doc(
        "... of them late across seconds in which the host stole at least as much CPU time "
        "as they were late",
        0,
    )


@dataclass(frozen=True)
class InvalidTry:
    """A measurement the generator's self-check marked invalid, measured again in its place."""

    check: GeneratorCheck | None = _doc("its self-check")
    steal: HostSteal | None = _doc("the host's steal during it")
    output: str | None = _doc("its generator output, kept in the run's raw/ folder")


@dataclass(frozen=True)
class StorySecond:
    """One second of a run: what users sent and got, and what the servers showed."""

    t: int = _doc("seconds since the generator started (this row is [t, t+1))", 0)
    arrivals: int = _doc("first attempts meant to be sent in this second (new visits)", 0)
    refreshes: int = _doc("attempts after the first (users reloading)", 0)
    goodput: int = _doc("attempts that ended with a 2xx in this second", 0)
    timeouts: int = _doc("attempts whose user gave up in this second", 0)
    errors: int = _doc("attempts that ended otherwise (refused, reset, non-2xx)", 0)
    in_flight: int = _doc("attempts open at the end of the second (client side)", 0)
    latency_p50: float | None = _doc(
        "user latency p50 of the visits that arrived in this second, s"
    )
    latency_p99: float | None = _doc("... and p99, s")
    nginx_499: int | None = _doc("requests nginx logged as 499 (client gone) ending here")
    nginx_5xx: int | None = _doc("requests nginx answered 5xx ending here")
    listen_queue: int | None = _doc("connections in the app's kernel accept queue")
    uwsgi_listen_queue: int | None = _doc("uWSGI's own listen-queue figure (stats server)")
    uwsgi_listen_queue_errors: int | None = _doc("uWSGI's listen-queue errors (stats server)")
    busy_workers: int | None = _doc("uWSGI workers in a request")
    busy_cores: int | None = _doc("uWSGI threads or greenlets in a request")
    cores: int | None = _doc("uWSGI threads or greenlets in all")
    worker_connections: list[int] | None = _doc(
        "connections to the app each worker process holds, in order of pid: uWSGI's busy "
        "threads; Gunicorn gthread's busy threads plus those queued inside the worker"
    )
    nginx_active: int | None = _doc("connections nginx holds (stub_status)")
    nginx_reading: int | None = _doc("... reading a request")
    nginx_writing: int | None = _doc("... waiting for the app's answer or writing it")
    nginx_waiting: int | None = _doc("... idle keep-alive")
    upstream_in_flight: int | None = _doc("calls waiting on the third party (slow_api's count)")
    threads: int | None = _doc("OS threads of the app's processes")
    processes: int | None = _doc("the app's processes")
    cpu_pct: float | None = _doc("the app's CPU, 100 = one core")
    rss_mb: float | None = _doc("the app's resident memory, MB")


@dataclass(frozen=True)
class StorySummary:
    """One target's figures through the incident (the report's row)."""

    visits: int = _doc("users who arrived", 0)
    attempts: int = _doc("requests they sent, reloads included", 0)
    amplification: float | None = _doc("attempts / visits")
    arrival_rate: float | None = _doc("new visits per second (from second 5 to the end)")
    goodput_before: float | None = _doc("2xx answers per second before the incident")
    goodput_during: float | None = _doc("... during it")
    goodput_after: float | None = _doc("... after it")
    arrivals_during: float | None = _doc("new visits per second during the incident")
    attempts_during: float | None = _doc("attempts per second during it, reloads included")
    recovery_s: float | None = _doc(
        "seconds from the incident's end until goodput is back to 95% of the answers due "
        "and stays so; null: not within the run"
    )
    normal_latency_s: float | None = _doc("user latency p50 before the incident, s")
    visits_served_before: float | None = _doc("share of the visits before it served")
    visits_served_during: float | None = _doc("share of the visits during it served")
    visits_never_served: int = _doc("visits that never got an answer", 0)
    user_latency_p50_during: float | None = _doc("user latency p50 of the visits during it, s")
    user_latency_p99_during: float | None = _doc("... p99, s")
    timeouts: int = _doc("attempts whose user gave up", 0)
    errors: int = _doc("attempts that ended otherwise", 0)
    error_latency_p50_s: float | None = _doc(
        "how fast an error came: p50 of the errors' time from the intended send, s (a 503 in "
        "50 ms is not a 4 s timeout)"
    )
    outcomes: dict[str, int] = _doc(
        "attempts by outcome (ok, timeout, http 503, ...)", factory=dict
    )
    wasted_499: int = _doc(
        "requests nginx passed on whose client had gone (499): the app still worked on each", 0
    )
    nginx_requests: int = _doc("requests in nginx's access log", 0)
    upstream_calls: int | None = _doc(
        "calls the third party answered for requests in nginx's log, joined on the request's "
        "id (slow_api's calls log); null: no call carried an id (a run before the id was "
        "passed on)"
    )
    calls_for_nobody: int | None = _doc(
        "... of them answered after nginx had already ended the request (its user had gone, "
        "or had an error): work done for nobody, counted at the third party"
    )
    peak_in_flight: float | None = _doc("most attempts open at once (client side)")
    peak_listen_queue: float | None = _doc("longest kernel accept queue of the app")
    peak_uwsgi_listen_queue: float | None = _doc("uWSGI's longest listen-queue figure")
    peak_busy_cores: float | None = _doc("most uWSGI threads or greenlets busy at once")
    worker_connections_during: list[float] | None = _doc(
        "the split between workers: each worker's mean worker_connections during the incident"
    )
    peak_upstream_in_flight: float | None = _doc("most calls waiting on the third party")
    peak_nginx_active: float | None = _doc("most connections nginx held")
    peak_threads: float | None = _doc("most OS threads of the app")
    threads_before: int | None = _doc("the app's OS threads at the start")
    peak_cpu_pct: float | None = _doc("the app's highest CPU sample, 100 = one core")
    peak_rss_mb: float | None = _doc("the app's most resident memory, MB")
    timeout_s: float | None = _doc("the users' timeout, s")


@dataclass(frozen=True)
class Incident:
    """When the third party slowed down, as the generator sent it."""

    start: float = _doc("seconds into the run the control request was sent", 0.0)
    seconds: float = _doc("how long the incident lasted, s", 0.0)
    control: dict[str, Any] | None = _doc("the control request as the generator recorded it")


@dataclass(frozen=True)
class AbPhase:
    """ab's requests in one phase of the incident."""

    name: str = _doc("before, during or after the incident", "")
    start_s: float = _doc("seconds since ab's first request (its start second)", 0.0)
    end_s: float = _doc("end of the phase, s", 0.0)
    requests: int = _doc("requests ab sent in the phase (and finished)", 0)
    per_s: float | None = _doc("... per second of the phase")
    latency_p50_s: float | None = _doc("their median response time, s")
    latency_max_s: float | None = _doc("their longest response time, s")


@dataclass(frozen=True)
class ClosedLoop:
    """One target's ab run through the same incident (a closed loop)."""

    concurrency: int = _doc("ab -c", 0)
    requests: int = _doc("rows of ab's -g file: every request it finished", 0)
    complete: int = _doc("ab's Complete requests", 0)
    failed: int = _doc("ab's Failed requests (failure events)", 0)
    non_2xx: int = _doc("ab's Non-2xx responses", 0)
    rps: float = _doc("ab's own Requests per second over the whole run", 0.0)
    time_taken_s: float = _doc("ab's run time, s", 0.0)
    latency_max_s: float | None = _doc("the longest response time, s")
    incident_at_s: float = _doc("when the control request was sent, s after ab's start", 0.0)
    incident_s: float = _doc("how long the incident lasted, s", 0.0)
    phases: list[AbPhase] = _doc("before, during, after", factory=list)
    adds_up: list[str] = _doc(
        "problems: each request in one phase, and as many as ab reported", factory=list
    )
    nginx_statuses: dict[str, int] = _doc("nginx's access log: requests by status", factory=dict)
    incident_control: str | None = _doc("the control request and when it was sent")
    commands: list[str] = _doc("what a reader types to repeat it", factory=list)

    def phase(self, name: str) -> AbPhase:
        return next(p for p in self.phases if p.name == name)


@dataclass(frozen=True)
class PredictedFigures:
    """What the model of the incident (`playground predict`) says for a measured target, or a
    measured step of a sweep or of the cliff, with the run's own settings, beside what was
    measured. For a rate step, "during" is its measured window."""

    verdict: str = _doc(
        "held, collapsed, or collapsed and did not recover; a rate step: held or fell", ""
    )
    visits_served_during: float | None = _doc("share of the visits during the incident served")
    goodput_during: float | None = _doc("2xx answers per second during it")
    recovery_s: float | None = _doc("seconds to recover after it; null: not within the run")
    amplification: float | None = _doc("attempts / visits")
    lasted_s: float | None = _doc(
        "a cliff's incident delay: seconds from the incident's start to the first second a "
        "user gave up; null: nobody did, or not a delay step",
        omit_none=True,
    )
    differs: list[str] = _doc(
        "where it disagrees with the measurement: the verdict, or visits served during more "
        "than 10 points apart (empty: it agrees)",
        factory=list,
    )
    error: str | None = _doc("why the model could not predict this target")


@dataclass
class StoryTarget:
    """One target (a registry entry of kind `story`) through the incident, once."""

    SECTION: ClassVar[str] = "story target"

    name: str = _doc("target name from the registry", "")
    repeat: int = _doc("which measurement of this target (1 to the run's `repeat`)", 1)
    title: str | None = _doc("human title of the target")
    model: str = _doc("`threads` (a fixed pool) or `gevent`", "")
    server: str = _doc("the program that runs the app (uWSGI, Gunicorn, ...)", "")
    compose_file: str | None = _doc("the compose file the target runs from")
    workers: int | None = _doc("processes of the app")
    per_worker: int | None = _doc("threads or greenlets per process, as run")
    commands: list[str] = _doc("what a reader types to repeat it", factory=list)
    check: GeneratorCheck | None = _doc("the generator's self-check")
    loop: str | None = _doc("the generator's event loop (tokio, uvloop or asyncio)")
    steal: HostSteal | None = _doc("the host's steal time while the generator ran")
    invalid_tries: list[InvalidTry] = _doc(
        "earlier measurements of this target the generator's self-check marked invalid, "
        "measured again (at most story.run.MAX_TRIES in all)",
        factory=list,
    )
    generator_exit: int | None = _doc("the generator's exit status")
    generator_stderr: str | None = _doc("the end of what the generator printed")
    incident: Incident | None = _doc("when the incident started, as sent")
    adds_up: list[str] = _doc(
        "problems: every attempt counted once when sent and once when ended", factory=list
    )
    summary: StorySummary | None = _doc("the figures through the incident")
    seconds: list[StorySecond] = _doc("one row per second of the run", factory=list)
    prediction: PoolPrediction | None = _doc(
        "a thread pool's: Little's law at the incident's delay and the story's rate"
    )
    closed_loop: ClosedLoop | None = _doc("the same incident under ab (--closed-loop)")
    closed_loop_error: str | None = _doc("why the closed loop could not be measured")
    findings: list[Finding] = _doc(
        "the verdicts, computed once when measured (playground.incident.verdict, playground.story.findings)",
        factory=list,
    )
    predicted: PredictedFigures | None = _doc(
        "the model's figures for this target with the same settings (`playground predict`)",
        omit_none=True,
    )
    error: str | None = _doc("why the target could not be measured")
    wall_s: float | None = _doc("seconds the target took, bring-up to teardown")
    outside: OutsideTarget | None = _doc("with --url: the service measured by its URL")
    extra: dict[str, Any] = _doc("keys this version does not know", factory=dict)


@dataclass(frozen=True)
class SweepStep:
    """One offered rate of one target in the sweep."""

    rate: float = _doc("offered visits per second (the setting)", 0.0)
    offered_per_s: float = _doc("first attempts meant to be sent per second in the window", 0.0)
    attempts_per_s: float = _doc("... with the reloads", 0.0)
    goodput_per_s: float = _doc("2xx answers per second that ended in the window", 0.0)
    timeouts: int = _doc("attempts that timed out in the window", 0)
    errors: int = _doc("attempts that ended otherwise in the window", 0)
    visits: int = _doc("visits that arrived in the window", 0)
    visits_served: float | None = _doc("share of them served, reloads included")
    latency_p50_s: float | None = _doc("user latency p50 from the intended send, s")
    latency_p99_s: float | None = _doc("... p99, s")
    check: GeneratorCheck | None = _doc("the generator's self-check for this step")
    adds_up: list[str] = _doc(
        "problems: every attempt counted once when sent and once when ended", factory=list
    )
    window_s: float = _doc("seconds in the measured window", 0.0)
    settled_before_s: float | None = _doc(
        "seconds the servers took to drain before the step; null: still busy when the "
        "settle time ran out (the step started anyway)",
        0.0,
    )
    predicted: PredictedFigures | None = _doc(
        "the model's figures for this step with the same settings (`playground predict`)",
        omit_none=True,
    )

    @property
    def valid(self) -> bool:
        return self.check is not None and self.check.valid


@dataclass
class SweepTarget:
    """One target through every rate of the sweep, on one bring-up."""

    name: str = _doc("target name from the registry", "")
    title: str | None = _doc("human title of the target")
    model: str = _doc("`threads` or `gevent`", "")
    server: str = _doc("the program that runs the app", "")
    capacity_per_s: float | None = _doc(
        "a thread pool's answers per second at the sweep's delay: workers x threads / delay "
        "(Little's law); null for gevent"
    )
    commands: list[str] = _doc("what a reader types to repeat it", factory=list)
    steps: list[SweepStep] = _doc("one per offered rate", factory=list)
    findings: list[Finding] = _doc("the verdicts, computed once when measured", factory=list)
    error: str | None = _doc("why the target could not be measured")
    wall_s: float | None = _doc("seconds it took")
    extra: dict[str, Any] = _doc("keys this version does not know", factory=dict)


@dataclass
class Sweep:
    """Goodput against offered load (`--sweep`)."""

    settings: SweepSettings = _doc("the sweep's rates and windows", factory=SweepSettings)
    targets: list[SweepTarget] = _doc("one per target", factory=list)


@dataclass(frozen=True)
class PoolPrediction:
    """What Little's law predicts for a fixed pool at one upstream time and offered rate."""

    pool: int = _doc("requests the pool holds at once: workers x threads", 0)
    upstream_s: float = _doc("the third party's time per call, s", 0.0)
    rate: float = _doc("offered visits per second", 0.0)
    capacity_per_s: float = _doc("answers per second the pool can give: pool / upstream_s", 0.0)
    tipping_delay_s: float = _doc(
        "the upstream time at which the rate fills the pool: pool / rate, s", 0.0
    )
    over: bool = _doc("the rate is above the capacity: the backlog grows", False)
    lasts_s: float | None = _doc(
        "once over: seconds until a newly arriving user waits longer than the timeout "
        "(steady state, no reloads); null when not over"
    )


@dataclass(frozen=True)
class DelayStep:
    """The whole incident once, at one of the cliff's incident delays."""

    incident_delay: float = _doc("the third party's time during the incident, s", 0.0)
    held: bool | None = _doc("at least findings.HELD_SHARE of the visits during it served")
    recovered: bool | None = _doc("back to 95% of the answers due within the run after it")
    recovery_s: float | None = _doc("seconds it took, from the incident's end")
    visits_served_during: float | None = _doc("share of the visits during it served")
    goodput_during: float | None = _doc("2xx answers per second during it")
    predicted_lasts_s: float | None = _doc(
        "Little's law: seconds from the incident's start until a new user waits past the "
        "timeout (steady state, no reloads); null where the pool is not over its capacity"
    )
    lasted_s: float | None = _doc(
        "measured: seconds from the incident's start to the first second a user gave up; "
        "null: nobody did during it"
    )
    trusted: bool = _doc("no error finding (the generator kept its schedule)", False)
    error: str | None = _doc("why it could not be measured")
    predicted: PredictedFigures | None = _doc(
        "the model's figures for this delay with the same settings (`playground predict`)",
        omit_none=True,
    )


@dataclass
class CliffTarget:
    """Where a thread pool's cliff is: Little's law's prediction, then the edge measured."""

    name: str = _doc("target name from the registry", "")
    title: str | None = _doc("human title of the target")
    prediction: PoolPrediction | None = _doc(
        "capacity at the rate sweep's delay; the upstream time at which the story's rate fills "
        "the pool (`tipping_delay_s`)"
    )
    rates: SweepTarget | None = _doc("the fine sweep of offered load at the cliff's delay")
    edge_rate: float | None = _doc(
        "the lowest offered rate whose goodput fell below findings.HELD_SHARE of it; null: none did"
    )
    held_rate: float | None = _doc("the highest offered rate below that edge that held")
    delays: list[DelayStep] = _doc("the incident at each delay, at the story's rate", factory=list)
    edge_delay: float | None = _doc("the shortest incident delay at which it collapsed")
    unrecovered_delay: float | None = _doc(
        "the shortest incident delay it did not recover from within the run"
    )
    findings: list[Finding] = _doc("how far the prediction is from the edge", factory=list)
    error: str | None = _doc("why it could not be measured")


@dataclass
class Cliff:
    """`--cliff`: the edge of each thread pool, predicted and found."""

    delay: float = _doc("the third party's delay during the rate sweep, s", 2.0)
    shares: list[float] = _doc(
        "offered rates of the sweep, as shares of the predicted capacity", factory=list
    )
    delays: list[float] = _doc("the incident delays tried at the story's rate, s", factory=list)
    targets: list[CliffTarget] = _doc("one per thread-pool target", factory=list)


@dataclass(frozen=True)
class ToolFigures:
    """An open-loop run reduced to what two tools can be compared on: requests sent on a
    schedule, the 2xx among them, and their latency from the scheduled send."""

    tool: str = _doc("`openloop` (the playground's generator) or `oha`", "")
    requests: int = _doc("requests the tool ended (answered, failed or timed out)", 0)
    ok: int = _doc("... with a 2xx answer", 0)
    duration_s: float = _doc("the schedule's length, s: goodput is ok over this", 0.0)
    latency_p50_s: float | None = _doc("p50 of the 2xx answers, from the scheduled send, s")
    latency_p99_s: float | None = _doc("... p99, s")
    errors: dict[str, int] = _doc("what the rest ended in, in the tool's own words", factory=dict)

    @property
    def goodput_per_s(self) -> float:
        return self.ok / self.duration_s if self.duration_s > 0 else 0.0


@dataclass(frozen=True)
class CrossCheck:
    """The same open-loop load from the playground's generator and from oha, compared."""

    target: str = _doc("target name from the registry", "")
    rate: float = _doc("requests per second offered by both (constant arrivals)", 0.0)
    openloop: ToolFigures | None = _doc("what openloop.py --no-refresh measured")
    oha: ToolFigures | None = _doc("what oha -q RATE --latency-correction measured")
    differences: list[str] = _doc(
        "where they disagree by more than the tolerance (empty: they agree)", factory=list
    )
    commands: list[str] = _doc("what a reader types to repeat it", factory=list)
    error: str | None = _doc("why it could not be measured")


@dataclass(frozen=True)
class FigureSpread:
    """One headline figure over a target's trusted repeats."""

    name: str = _doc("the StorySummary field", "")
    median: float | None = _doc("median over the trusted repeats")
    min: float | None = _doc("the smallest")
    max: float | None = _doc("the largest")
    values: list[float | None] = _doc("each trusted repeat's, in order", factory=list)


@dataclass
class TargetSpread:
    """A target's repeats (`--repeat`) side by side: the headline figures' median and
    min-max, and each repeat's verdict."""

    name: str = _doc("target name from the registry", "")
    repeats: int = _doc("measurements made", 0)
    trusted: int = _doc("... whose figures can be trusted (no error finding)", 0)
    verdicts: list[str] = _doc(
        "each trusted repeat's verdict: `held`, `collapsed` or `-`", factory=list
    )
    figures: list[FigureSpread] = _doc("the headline figures", factory=list)
    findings: list[Finding] = _doc(
        "e.g. `verdict-split`: held in some repeats, collapsed in others", factory=list
    )

    def figure(self, name: str) -> FigureSpread | None:
        return next((f for f in self.figures if f.name == name), None)


@dataclass
class StoryRun(RunHeader):
    """One `playground story`: its header, its settings and what each target did."""

    KIND: ClassVar[str] = "story"

    kind: str = _doc("`story`", "story")
    predicted: bool | None = _doc(
        "true: a prediction by the model of the incident (`playground predict`), not a "
        "measurement; absent: a measurement",
        omit_none=True,
    )
    story: StorySettings = _doc("the incident and its users", factory=StorySettings)
    repeat: int = _doc("measurements per target, each on a fresh bring-up (`--repeat`)", 1)
    targets: list[StoryTarget] = _doc(
        "one per target and repeat through the incident, in the order measured", factory=list
    )
    spreads: list[TargetSpread] = _doc(
        "with more than one repeat: per target, the spread of its headline figures", factory=list
    )
    crosschecks: list[CrossCheck] = _doc(
        "with --cross-check: the generator against oha on the same loads", factory=list
    )
    cliff: Cliff | None = _doc("with --cliff: each thread pool's edge, predicted and found")
    sweep: Sweep | None = _doc("goodput against offered load, with --sweep")

    @classmethod
    def from_json(cls, data: Any, *, where: str = "results") -> StoryRun:
        if not isinstance(data, dict):
            raise ModelError(f"{where}: expected a JSON object, got {type(data).__name__}")
        if data.get("schema_version") != SCHEMA_VERSION or data.get("kind") != cls.KIND:
            raise ModelError(
                f"{where}: not a story run of schema {SCHEMA_VERSION} "
                f"(schema_version {data.get('schema_version')!r}, kind {data.get('kind')!r})"
            )
        try:
            run: StoryRun = _from_json(cls, data, where)
        except StoryError as exc:
            raise ModelError(f"{where}: {exc}") from None
        return run

    def target(self, name: str) -> StoryTarget | None:
        """The target's first measurement (see `spread` for all of them)."""
        return next((t for t in self.targets if t.name == name), None)

    def spread(self, name: str) -> TargetSpread | None:
        return next((s for s in self.spreads if s.name == name), None)


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (StoryRun, "StoryRun (the whole file of a `playground story` run)"),
    (StorySettings, "StorySettings (`story`)"),
    (StoryTarget, "StoryTarget (each of `targets`)"),
    (GeneratorCheck, "GeneratorCheck (`check`)"),
    (HostSteal, "HostSteal (`steal`)"),
    (InvalidTry, "InvalidTry (each of `invalid_tries`)"),
    (Incident, "Incident (`incident`)"),
    (StorySummary, "StorySummary (`summary`)"),
    (PredictedFigures, "PredictedFigures (each `predicted`)"),
    (StorySecond, "StorySecond (each of `seconds`)"),
    (OutsideTarget, "OutsideTarget (`outside`)"),
    (IncidentCommand, "IncidentCommand (each of `outside.commands`)"),
    (ClosedLoop, "ClosedLoop (`closed_loop`)"),
    (AbPhase, "AbPhase (each of `closed_loop.phases`)"),
    (Sweep, "Sweep (`sweep`)"),
    (SweepSettings, "SweepSettings (`sweep.settings`)"),
    (SweepTarget, "SweepTarget (each of `sweep.targets`)"),
    (SweepStep, "SweepStep (each of `sweep.targets[].steps`)"),
    (TargetSpread, "TargetSpread (each of `spreads`)"),
    (CrossCheck, "CrossCheck (each of `crosschecks`)"),
    (Cliff, "Cliff (`cliff`)"),
    (CliffTarget, "CliffTarget (each of `cliff.targets`)"),
    (PoolPrediction, "PoolPrediction (`cliff.targets[].prediction`)"),
    (DelayStep, "DelayStep (each of `cliff.targets[].delays`)"),
    (ToolFigures, "ToolFigures (`crosschecks[].openloop`, `crosschecks[].oha`)"),
    (FigureSpread, "FigureSpread (each of `spreads[].figures`)"),
)

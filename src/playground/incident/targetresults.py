"""What one measurement of the story records: the generator's self-check and the host's steal,
each second of the run (:class:`StorySecond`), the figures through the incident
(:class:`StorySummary`), the closed loop's (:class:`ClosedLoop`), the model's beside them
(:class:`PredictedFigures`), and an open-loop tool's figures for the cross-check
(:class:`ToolFigures`). :class:`playground.incident.storyresults.StoryTarget` holds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playground.core.jsonmodel import doc


@dataclass(frozen=True)
class GeneratorCheck:
    """The open-loop generator's self-check: did it keep its schedule?"""

    valid: bool = doc("every send close enough to its intended time (see `reasons`)", False)
    reasons: list[str] = doc("why not, one sentence each", factory=list)
    send_lag_p50_s: float | None = doc("median lag of a send behind its intended time, s")
    send_lag_p99_s: float | None = doc("99th percentile of the send lag, s")
    send_lag_max_s: float | None = doc("the largest send lag, s")


@dataclass(frozen=True)
class HostSteal:
    """The host's steal time while the generator ran (/proc/stat: CPU time the hypervisor
    gave elsewhere while this machine had work), and the late sends it came with."""

    steal_s: float = doc("CPU-seconds stolen over the run, every CPU together", 0.0)
    share: float | None = doc("... as a share of all the machine's CPU time in the run")
    per_second_s: list[float] = doc(
        "CPU-seconds stolen in each second of the run, from the generator's second 0",
        factory=list,
    )
    late_sends: int = doc("sends later than the self-check's p99 bound (10 ms)", 0)
    late_sends_with_steal: int = doc(
        "... of them late across seconds in which the host stole at least as much CPU time "
        "as they were late",
        0,
    )


@dataclass(frozen=True)
class InvalidTry:
    """A measurement the generator's self-check marked invalid, measured again in its place."""

    check: GeneratorCheck | None = doc("its self-check")
    steal: HostSteal | None = doc("the host's steal during it")
    output: str | None = doc("its generator output, kept in the run's raw/ folder")


@dataclass(frozen=True)
class StorySecond:
    """One second of a run: what users sent and got, and what the servers showed."""

    t: int = doc("seconds since the generator started (this row is [t, t+1))", 0)
    arrivals: int = doc("first attempts meant to be sent in this second (new visits)", 0)
    refreshes: int = doc("attempts after the first (users reloading)", 0)
    goodput: int = doc("attempts that ended with a 2xx in this second", 0)
    timeouts: int = doc("attempts whose user gave up in this second", 0)
    errors: int = doc("attempts that ended otherwise (refused, reset, non-2xx)", 0)
    in_flight: int = doc("attempts open at the end of the second (client side)", 0)
    latency_p50: float | None = doc("user latency p50 of the visits that arrived in this second, s")
    latency_p99: float | None = doc("... and p99, s")
    nginx_499: int | None = doc("requests nginx logged as 499 (client gone) ending here")
    nginx_5xx: int | None = doc("requests nginx answered 5xx ending here")
    listen_queue: int | None = doc("connections in the app's kernel accept queue")
    uwsgi_listen_queue: int | None = doc("uWSGI's own listen-queue figure (stats server)")
    uwsgi_listen_queue_errors: int | None = doc("uWSGI's listen-queue errors (stats server)")
    busy_workers: int | None = doc("uWSGI workers in a request")
    busy_cores: int | None = doc("uWSGI threads or greenlets in a request")
    cores: int | None = doc("uWSGI threads or greenlets in all")
    worker_connections: list[int] | None = doc(
        "connections to the app each worker process holds, in order of pid: uWSGI's busy "
        "threads; Gunicorn gthread's busy threads plus those queued inside the worker"
    )
    nginx_active: int | None = doc("connections nginx holds (stub_status)")
    nginx_reading: int | None = doc("... reading a request")
    nginx_writing: int | None = doc("... waiting for the app's answer or writing it")
    nginx_waiting: int | None = doc("... idle keep-alive")
    upstream_in_flight: int | None = doc("calls waiting on the third party (slow_api's count)")
    threads: int | None = doc("OS threads of the app's processes")
    processes: int | None = doc("the app's processes")
    cpu_pct: float | None = doc("the app's CPU, 100 = one core")
    rss_mb: float | None = doc("the app's resident memory, MB")


@dataclass(frozen=True)
class StorySummary:
    """One target's figures through the incident (the report's row)."""

    visits: int = doc("users who arrived", 0)
    attempts: int = doc("requests they sent, reloads included", 0)
    amplification: float | None = doc("attempts / visits")
    arrival_rate: float | None = doc("new visits per second (from second 5 to the end)")
    goodput_before: float | None = doc("2xx answers per second before the incident")
    goodput_during: float | None = doc("... during it")
    goodput_after: float | None = doc("... after it")
    arrivals_during: float | None = doc("new visits per second during the incident")
    attempts_during: float | None = doc("attempts per second during it, reloads included")
    recovery_s: float | None = doc(
        "seconds from the incident's end until goodput is back to 95% of the answers due "
        "and stays so; null: not within the run"
    )
    normal_latency_s: float | None = doc("user latency p50 before the incident, s")
    visits_served_before: float | None = doc("share of the visits before it served")
    visits_served_during: float | None = doc("share of the visits during it served")
    visits_never_served: int = doc("visits that never got an answer", 0)
    user_latency_p50_during: float | None = doc("user latency p50 of the visits during it, s")
    user_latency_p99_during: float | None = doc("... p99, s")
    timeouts: int = doc("attempts whose user gave up", 0)
    errors: int = doc("attempts that ended otherwise", 0)
    error_latency_p50_s: float | None = doc(
        "how fast an error came: p50 of the errors' time from the intended send, s (a 503 in "
        "50 ms is not a 4 s timeout)"
    )
    outcomes: dict[str, int] = doc("attempts by outcome (ok, timeout, http 503, ...)", factory=dict)
    wasted_499: int = doc(
        "requests nginx passed on whose client had gone (499): the app still worked on each", 0
    )
    nginx_requests: int = doc("requests in nginx's access log", 0)
    upstream_calls: int | None = doc(
        "calls the third party answered for requests in nginx's log, joined on the request's "
        "id (slow_api's calls log); null: no call carried an id (a run before the id was "
        "passed on)"
    )
    calls_for_nobody: int | None = doc(
        "... of them answered after nginx had already ended the request (its user had gone, "
        "or had an error): work done for nobody, counted at the third party"
    )
    peak_in_flight: float | None = doc("most attempts open at once (client side)")
    peak_listen_queue: float | None = doc("longest kernel accept queue of the app")
    peak_uwsgi_listen_queue: float | None = doc("uWSGI's longest listen-queue figure")
    peak_busy_cores: float | None = doc("most uWSGI threads or greenlets busy at once")
    worker_connections_during: list[float] | None = doc(
        "the split between workers: each worker's mean worker_connections during the incident"
    )
    worker_connections_before: list[float] | None = doc(
        "... each worker's mean worker_connections from second 3 to the incident's start "
        "(playground.incident.split, which also gives the busiest worker's share of them); "
        "absent: no split, or a run recorded before it was kept (that module reads it from "
        "the run's seconds then)",
        omit_none=True,
    )
    peak_upstream_in_flight: float | None = doc("most calls waiting on the third party")
    peak_nginx_active: float | None = doc("most connections nginx held")
    peak_threads: float | None = doc("most OS threads of the app")
    threads_before: int | None = doc("the app's OS threads at the start")
    peak_cpu_pct: float | None = doc("the app's highest CPU sample, 100 = one core")
    peak_rss_mb: float | None = doc("the app's most resident memory, MB")
    timeout_s: float | None = doc("the users' timeout, s")


@dataclass(frozen=True)
class Incident:
    """When the third party slowed down, as the generator sent it."""

    start: float = doc("seconds into the run the control request was sent", 0.0)
    seconds: float = doc("how long the incident lasted, s", 0.0)
    control: dict[str, Any] | None = doc("the control request as the generator recorded it")


@dataclass(frozen=True)
class AbPhase:
    """ab's requests in one phase of the incident."""

    name: str = doc("before, during or after the incident", "")
    start_s: float = doc("seconds since ab's first request (its start second)", 0.0)
    end_s: float = doc("end of the phase, s", 0.0)
    requests: int = doc("requests ab sent in the phase (and finished)", 0)
    per_s: float | None = doc("... per second of the phase")
    latency_p50_s: float | None = doc("their median response time, s")
    latency_max_s: float | None = doc("their longest response time, s")


@dataclass(frozen=True)
class ClosedLoop:
    """One target's ab run through the same incident (a closed loop)."""

    concurrency: int = doc("ab -c", 0)
    requests: int = doc("rows of ab's -g file: every request it finished", 0)
    complete: int = doc("ab's Complete requests", 0)
    failed: int = doc("ab's Failed requests (failure events)", 0)
    non_2xx: int = doc("ab's Non-2xx responses", 0)
    rps: float = doc("ab's own Requests per second over the whole run", 0.0)
    time_taken_s: float = doc("ab's run time, s", 0.0)
    latency_max_s: float | None = doc("the longest response time, s")
    incident_at_s: float = doc("when the control request was sent, s after ab's start", 0.0)
    incident_s: float = doc("how long the incident lasted, s", 0.0)
    phases: list[AbPhase] = doc("before, during, after", factory=list)
    adds_up: list[str] = doc(
        "problems: each request in one phase, and as many as ab reported", factory=list
    )
    nginx_statuses: dict[str, int] = doc("nginx's access log: requests by status", factory=dict)
    incident_control: str | None = doc("the control request and when it was sent")
    commands: list[str] = doc("what a reader types to repeat it", factory=list)

    def phase(self, name: str) -> AbPhase:
        return next(p for p in self.phases if p.name == name)


@dataclass(frozen=True)
class PredictedFigures:
    """What the model of the incident (`playground predict`) says for a measured target, or a
    measured step of a sweep or of the cliff, with the run's own settings, beside what was
    measured. For a rate step, "during" is its measured window."""

    verdict: str = doc(
        "held, collapsed, or collapsed and did not recover; a rate step: held or fell", ""
    )
    visits_served_during: float | None = doc("share of the visits during the incident served")
    goodput_during: float | None = doc("2xx answers per second during it")
    recovery_s: float | None = doc("seconds to recover after it; null: not within the run")
    amplification: float | None = doc("attempts / visits")
    lasted_s: float | None = doc(
        "a cliff's incident delay: seconds from the incident's start to the first second a "
        "user gave up; null: nobody did, or not a delay step",
        omit_none=True,
    )
    draws: int | None = doc(
        "a measured target's: the model's draws of it (the figures above are the "
        "representative draw's); null: one draw (a cliff's delay, a rate step)",
        omit_none=True,
    )
    collapsed_draws: int | None = doc(
        "of those draws, how many collapsed, recovered or not: P(collapse) is this over `draws`",
        omit_none=True,
    )
    differs: list[str] = doc(
        "where it disagrees with the measurement: the verdict, or visits served during more "
        "than 10 points apart (empty: it agrees)",
        factory=list,
    )
    error: str | None = doc("why the model could not predict this target")


@dataclass(frozen=True)
class ToolFigures:
    """An open-loop run reduced to what two tools can be compared on: requests sent on a
    schedule, the 2xx among them, and their latency from the scheduled send."""

    tool: str = doc("`openloop` (the playground's generator) or `oha`", "")
    requests: int = doc("requests the tool ended (answered, failed or timed out)", 0)
    ok: int = doc("... with a 2xx answer", 0)
    duration_s: float = doc("the schedule's length, s: goodput is ok over this", 0.0)
    latency_p50_s: float | None = doc("p50 of the 2xx answers, from the scheduled send, s")
    latency_p99_s: float | None = doc("... p99, s")
    errors: dict[str, int] = doc("what the rest ended in, in the tool's own words", factory=dict)

    @property
    def goodput_per_s(self) -> float:
        return self.ok / self.duration_s if self.duration_s > 0 else 0.0

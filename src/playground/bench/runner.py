"""One benchmark run: for each compose file, up -> check -> warm up -> load -> down.

Each measurement becomes one results entry, saved as soon as it is finished. Whatever happens
(an error, Ctrl-C, SIGTERM) the scenario that is up is torn down and the load-generator
container removed; finished results are already on disk.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import groupby, pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playground import diagnosis, hostpath
from playground import load as loadmod
from playground.compose import WAIT_TIMEOUT_S, Docker, DockerError, shown
from playground.model import Entry, Repeat, Sample, Spread
from playground.results import RunStore, entry_key
from playground.sampling import (
    ProcReader,
    Sampler,
    Series,
    StatsReader,
    combine,
    open_files_limit,
    reader_for,
)
from playground.scenarios import REGISTRY, Target
from playground.steady import Timeline, parse_timeline, waves

MIN_LOAD_S = 10.0
WARMUP_REQUESTS = 20
# The readers of the app's containers, by service.
Readers = dict[str, ProcReader | StatsReader]


@dataclass(frozen=True)
class Plan:
    """What to measure: targets with their load, and how."""

    targets: tuple[Target, ...]
    tool: str = "ab"
    requests: int | None = None  # None: each target's own default
    concurrency: int | None = None
    delay: float | None = None
    sweep: tuple[int, ...] = ()
    repeat: int = 1
    duration_s: float = 10.0  # wrk only
    from_host: bool = False
    calibration: bool = True
    wait_timeout_s: int = WAIT_TIMEOUT_S  # how long a scenario may take to become healthy
    # Scale runs: a folder of override files named like the scenario files (scale/), a delay
    # per concurrency, and the efficiency under which a mode has stopped scaling (its higher
    # concurrencies are then skipped: a thread-per-request server would take hours at c=10,000).
    overrides_dir: Path | None = None
    delays: tuple[tuple[int, float], ...] = ()
    stop_below: float | None = None
    # Targets swept at concurrencies of their own instead of ``sweep`` (scale's NAME@C,...).
    sweeps: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def loads(self, target: Target) -> list[Target]:
        """The target at each load this plan runs it (one per sweep concurrency)."""
        base = replace(
            self._overridden(target),
            requests=self.requests or target.requests,
            concurrency=self.concurrency or target.concurrency,
            delay=target.delay if self.delay is None else self.delay,
        )
        sweep = dict(self.sweeps).get(target.name, self.sweep)
        if not sweep:
            return [base]
        delays = dict(self.delays)
        loads = []
        for c in sweep:
            delay = delays.get(c, base.delay)
            if delays:
                # At least ~10 s of load, and enough rounds to reach a steady state (with
                # fewer the run shows no steady figure; see diagnosis.MIN_STEADY_WAVES).
                waves = max(diagnosis.MIN_STEADY_ROUNDS, math.ceil(MIN_LOAD_S / max(delay, 0.1)))
            else:
                # A sweep keeps n/c constant (as many waves at every concurrency).
                waves = max(base.requests // base.concurrency, 1)
            # Full rounds after ab's lone first request: with n = waves x c, ab would open one
            # connection it never sends a request on, and count the server closing it idle as a
            # failed request (load.ab_requests).
            loads.append(
                replace(
                    base,
                    concurrency=c,
                    delay=delay,
                    requests=self.requests or loadmod.ab_requests(rounds=waves, concurrency=c),
                )
            )
        return loads

    def _overridden(self, target: Target) -> Target:
        """The target with the override of its compose file's name from ``overrides_dir``."""
        if self.overrides_dir is None or not (self.overrides_dir / target.compose_file).exists():
            return target
        return target.at_scale(f"{self.overrides_dir.name}/{target.compose_file}")


@dataclass
class Progress:
    """What the runner tells the person watching; the CLI plugs rich in here."""

    echo: Callable[[str], None] = lambda line: None
    info: Callable[[str], None] = lambda line: None
    warn: Callable[[str], None] = lambda line: None
    load_started: Callable[[Target, float], None] = lambda target, seconds: None
    load_finished: Callable[[Target], None] = lambda target: None


@dataclass
class Runner:
    docker: Docker
    store: RunStore
    plan: Plan
    progress: Progress = field(default_factory=Progress)

    def tool_name(self, target: Target) -> str:
        return target.tool or self.plan.tool

    def tool(self, target: Target) -> loadmod.LoadTool:
        return loadmod.TOOLS[self.tool_name(target)]

    def duration(self, target: Target) -> float:
        return target.duration_s or self.plan.duration_s

    # --- the matrix -----------------------------------------------------------------------
    def run(self, calibration: Target | None) -> None:
        done = self.store.done()
        if calibration is not None and self.plan.calibration:
            todo = [t for t in self.plan.loads(calibration) if _key(t) not in done]
            # The ceiling is measured at the plan's main load only.
            if todo:
                self._run_file(todo[0].compose_files, todo[:1], services=calibration.services)
        loads = [
            load
            for target in self.plan.targets
            if target.kind != "calibration"
            for load in self.plan.loads(target)
            if _key(load) not in done
        ]
        # One `up` per compose file (with its overrides) for every load it serves.
        for files, group in groupby(loads, key=lambda t: t.compose_files):
            self._run_file(files, list(group))

    def _run_file(
        self,
        compose_file: tuple[str, ...],
        loads: Sequence[Target],
        *,
        services: Sequence[str] = (),
    ) -> None:
        if not loads:
            return
        self.progress.info(
            f"[bold]{' + '.join(compose_file)}[/bold]: "
            + ", ".join(f"{t.name} n={t.requests} c={t.concurrency}" for t in loads)
        )
        stopped: dict[str, Entry] = {}
        try:
            with self._scenario(compose_file, services, app_services=loads[0].app_services):
                network = f"{self.docker.project(compose_file)}_default"
                for target in loads:
                    if target.name in stopped:
                        self.store.add(self._skipped_entry(target, stopped[target.name]))
                        continue
                    entry = self._measure(target, network=network)
                    self.store.add(entry)
                    if self._stopped_scaling(entry):
                        stopped[target.name] = entry
        except DockerError as exc:
            self.progress.warn(str(exc))
            for target in loads:
                if _key(target) not in self.store.done():
                    self.store.add(self._error_entry(target, str(exc).splitlines()[0]))

    def _stopped_scaling(self, entry: Entry) -> bool:
        limit = self.plan.stop_below
        return limit is not None and entry.efficiency is not None and entry.efficiency < limit

    def _skipped_entry(self, target: Target, at: Entry) -> Entry:
        reason = (
            f"not run: {target.name} stopped scaling at c={at.concurrency} "
            f"(efficiency {at.efficiency:.0%} < {self.plan.stop_below:.0%})"
        )
        return self._error_entry(target, reason, skipped=True)

    @contextmanager
    def _scenario(
        self,
        compose_file: tuple[str, ...],
        services: Sequence[str],
        *,
        app_services: Sequence[str] = (),
    ) -> Iterator[None]:
        self.docker.check_ports_free(compose_file, services)
        try:
            self.docker.up(compose_file, services, wait_timeout=self.plan.wait_timeout_s)
            self.docker.pin(compose_file, app_services)
            yield
        finally:
            self.docker.down(compose_file)

    # --- one measurement ------------------------------------------------------------------
    def _measure(self, target: Target, *, network: str) -> Entry:
        status, body = self.docker.fetch(network=network, url=target.url(delay=0))
        if status != 200 or not target.body_ok(body):
            return self._error_entry(
                target, f"unexpected answer before measuring: {status} {body.strip()[:120]!r}"
            )
        containers = {
            s: self.docker.container_id(target.compose_files, s) for s in target.app_services
        }
        readers = {
            s: reader_for(container=cid, pid=self.docker.main_pid(cid))
            for s, cid in containers.items()
            if cid
        }
        repeats = []
        for i in range(self.plan.repeat):
            # Before: the server as a reader sees it in `top -H` before any load.
            with Sampler(readers) as idle:
                time.sleep(0.6)
            self._warm_up(target, network=network)
            repeats.append(
                self._load_once(
                    target, network=network, readers=readers, before=idle.series, attempt=i
                )
            )
        restarts = {s: self.docker.restart_count(cid) for s, cid in containers.items() if cid}
        fd_limits = {
            s: open_files_limit(self.docker.main_pid(cid)) for s, cid in containers.items() if cid
        }
        return self._entry(target, repeats, restarts=restarts, network=network, fd_limits=fd_limits)

    def _warm_up(self, target: Target, *, network: str) -> None:
        """A few quick requests so first-request costs (imports, DNS) stay out of the figures."""
        c = min(target.concurrency, 5)
        argv = [
            "ab",
            "-q",
            "-r",
            "-n",
            str(max(WARMUP_REQUESTS, c)),
            "-c",
            str(c),
            "-s",
            "30",
            target.url(delay=0),
        ]
        self.docker.run(
            self.docker.loadgen_argv(network=network, tool_argv=argv),
            check=False,
            quiet=True,
            timeout=120,
        )

    def _load_once(
        self,
        target: Target,
        *,
        network: str,
        readers: Readers,
        before: dict[str, Series],
        attempt: int,
    ) -> Measured | Failed:
        raw = self.store.raw_dir
        stem = f"{target.name}-c{target.concurrency}-r{attempt + 1}"
        tool = self.tool(target)
        host_url = target.host_url(delay=target.delay) if self.plan.from_host else None
        ab = self.tool_name(target) == "ab"
        # The tool writes its per-request file into raw/: seen as /out inside the container.
        per_request = (str(raw / f"{stem}.tsv") if host_url else f"/out/{stem}.tsv") if ab else None
        tool_argv = tool.command(
            url=host_url or self._tool_url(target, network=network),
            requests=target.requests,
            concurrency=target.concurrency,
            timeout_s=self._timeout_s(target),
            duration_s=self.duration(target),
            per_request_path=per_request,
        )
        # What a reader would type: the same load, from the same network or from the host.
        bare = [a for a in tool_argv if a not in ("-g", per_request)]
        self.progress.echo(
            shown(bare if host_url else self.docker.loadgen_argv(network=network, tool_argv=bare))
        )
        budget = self._expected_s(target) * 4 + 60
        host_port = urlsplit(host_url).port if host_url else None
        host_before = hostpath.snapshot(port=host_port) if host_port is not None else None
        self.progress.load_started(target, self._expected_s(target))
        try:
            if host_url:
                stdout, stderr, exit_code, sampler = self._on_host(tool_argv, readers, budget)
            else:
                stdout, stderr, exit_code, sampler = self._in_container(
                    tool_argv,
                    readers,
                    budget,
                    network=network,
                    name=f"flask-playground-load-{self.store.data['run_id']}-{stem}",
                )
        finally:
            self.progress.load_finished(target)
        (raw / f"{stem}.txt").write_text(stdout + ("\n--- stderr ---\n" + stderr if stderr else ""))
        tsv_path = raw / f"{stem}.tsv"
        tsv = tsv_path.read_text() if tsv_path.exists() else None
        # From the host, Docker's port-forwarding proxy is part of the path: name what it did.
        host_notes = (
            hostpath.causes(
                before=host_before,
                after=hostpath.snapshot(port=host_before.port, known=host_before.proxies),
                concurrency=target.concurrency,
                output=stdout + stderr,
            )
            if host_before
            else []
        )
        try:
            result = tool.parse(
                stdout=stdout + "\n" + stderr, per_request=tsv, concurrency=target.concurrency
            )
        except loadmod.LoadOutputError as exc:
            return Failed(
                "; ".join([f"{self.tool_name(target)} exited {exit_code}: {exc}", *host_notes])
            )
        loadgen = sampler.series.pop("__loadgen__")
        try:
            timeline = parse_timeline(tsv) if tsv else None
        except loadmod.LoadOutputError:
            timeline = None  # the tool's report stands; only the steady figure is lost
        return Measured(
            result=result,
            timeline=timeline,
            series=sampler.series,
            before=before,
            loadgen_cpu=loadgen.peak("cpu_pct"),
            host_path=tuple(host_notes),
        )

    def _tool_url(self, target: Target, *, network: str) -> str:
        """The URL the load tool is given. wrk refuses host names with an underscore
        (`flask_app`), so for wrk such a service is named by its address on the network."""
        url = target.url(delay=target.delay)
        if self.tool_name(target).startswith("wrk") and "_" in target.service:
            container = self.docker.container_id(target.compose_files, target.service)
            ip = self.docker.ip_address(container, network=network) if container else None
            if ip:
                url = url.replace(f"//{target.service}:", f"//{ip}:", 1)
        return url

    def _in_container(
        self, argv: list[str], readers: Readers, budget: float, *, network: str, name: str
    ) -> tuple[str, str, int, Sampler]:
        """The load generator in its own container on the scenario's network."""
        self.docker.remove(name)
        try:
            self.docker.run(
                self.docker.loadgen_argv(
                    network=network,
                    tool_argv=argv,
                    name=name,
                    out_dir=self.store.raw_dir,
                    detach=True,
                ),
                quiet=True,
            )
            load_reader = reader_for(container=name, pid=self.docker.main_pid(name))
            with Sampler({**readers, "__loadgen__": load_reader}) as sampler:
                exit_code = self.docker.wait_container(name, timeout=budget)
            stdout, stderr = self.docker.container_logs(name)
        finally:
            self.docker.remove(name)
        return stdout, stderr, exit_code, sampler

    @staticmethod
    def _on_host(argv: list[str], readers: Readers, budget: float) -> tuple[str, str, int, Sampler]:
        """The load generator on this host, against the scenario's published 127.0.0.1 port."""
        if shutil.which(argv[0]) is None:
            raise DockerError(
                f"{argv[0]} is not installed on this host (apt-get install "
                f"{'apache2-utils' if argv[0] == 'ab' else argv[0]}); without "
                "--from-host the load runs in the project's container"
            )
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            with Sampler({**readers, "__loadgen__": ProcReader(pids=[proc.pid])}) as sampler:
                try:
                    stdout, stderr = proc.communicate(timeout=budget)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    stdout, stderr = proc.communicate()
                    stderr += f"\nkilled after {budget:.0f} s"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return stdout, stderr, proc.returncode, sampler

    def _expected_s(self, target: Target) -> float:
        if self.tool_name(target) != "ab":
            return self.duration(target)
        return (target.requests / target.concurrency + 1) * max(target.delay, 0.05)

    @staticmethod
    def _timeout_s(target: Target) -> float:
        """Per-request timeout: generous, but a stuck server still ends the run."""
        return max(30.0, target.delay * 3 + 10)

    # --- entries --------------------------------------------------------------------------
    def _base_entry(self, target: Target, **figures: Any) -> Entry:
        """Every entry is made here, its verdicts decided once (`diagnosis.verdicts`)."""
        delay = target.delay
        tutorial = self._tutorial_load(target)
        entry = Entry(
            name=target.name,
            title=target.title,
            kind=target.kind,
            compose_file=target.compose_file,
            service=target.service,
            url=target.url(delay=delay),
            requests=target.requests,
            concurrency=target.concurrency,
            delay=delay,
            tool=self.tool_name(target),
            ideal_rps=loadmod.ideal_rps(concurrency=target.concurrency, delay=delay),
            ab_cap_rps=(
                loadmod.ab_cap_rps(
                    requests=target.requests, concurrency=target.concurrency, delay=delay
                )
                if self.tool_name(target) == "ab"
                else None
            ),
            tutorial_rps=target.tutorial_rps if tutorial else None,
            tutorial_time_s=target.tutorial_time_s if tutorial else None,
            published=target.published,
            **figures,
        )
        return diagnosis.verdicts(entry)

    @staticmethod
    def _tutorial_load(target: Target) -> bool:
        """The published figure only compares with a run at the tutorial's own load."""
        default = REGISTRY.get(target.name)
        return default is not None and (default.requests, default.concurrency, default.delay) == (
            target.requests,
            target.concurrency,
            target.delay,
        )

    def _error_entry(self, target: Target, error: str, *, skipped: bool = False) -> Entry:
        return self._base_entry(
            target,
            latency_ms={"p50": None, "p90": None, "p99": None, "max": None},
            valid=False,
            invalid_reasons=[error],
            commands=self._commands(target),
            error=error,
            skipped=skipped,
        )

    def _commands(self, target: Target, network: str | None = None) -> dict[str, str | None]:
        tool_argv = self.tool(target).command(
            url=target.url(delay=target.delay),
            requests=target.requests,
            concurrency=target.concurrency,
            timeout_s=self._timeout_s(target),
            duration_s=self.duration(target),
            per_request_path=None,
        )
        network = network or self.docker.network(target.compose_files)
        host_url = target.host_url(delay=target.delay)
        services = " ".join(target.services)
        return {
            "up": shown(self.docker.compose(target.compose_files, "up", "--build", "-d", "--wait"))
            + (f" {services}" if services else ""),
            "pin": self._pin_commands(target),
            "load": shown(self.docker.loadgen_argv(network=network, tool_argv=tool_argv)),
            "host_load": (shown([*tool_argv[:-1], host_url]) if host_url else None),
            "threads": shown(
                self.docker.compose(
                    target.compose_files, "exec", target.app_services[0], "top", "-H"
                )
            ),
            "down": shown(self.docker.compose(target.compose_files, "down", "--volumes")),
        }

    def _pin_commands(self, target: Target) -> str | None:
        """What --pin-cpus does by hand: one `docker update` per side (None: not pinned)."""
        pinning = self.docker.pinning
        if pinning is None:
            return None
        ps = shown(self.docker.compose(target.compose_files, "ps", "--quiet"))
        apps = " ".join(target.app_services)
        return (
            f"docker update --cpuset-cpus {pinning.rest_cpus} $({ps})\n"
            f"docker update --cpuset-cpus {pinning.app_cpus} $({ps} {apps})"
        )

    def _entry(
        self,
        target: Target,
        repeats: Sequence[Measured | Failed],
        *,
        restarts: dict[str, int],
        network: str,
        fd_limits: dict[str, int | None] | None = None,
    ) -> Entry:
        errors = [r.error for r in repeats if isinstance(r, Failed)]
        measured = [r for r in repeats if isinstance(r, Measured)]
        if not measured:
            return self._error_entry(target, errors[0] if errors else "no measurement")
        mid = median_measurement(measured)
        r = mid.result
        during = combine(mid.series.values())
        before = combine(mid.before.values())
        loadgen_cpu = max((m.loadgen_cpu or 0 for m in measured), default=None)
        saturated = diagnosis.saturated(loadgen_cpu)
        failed = max(m.result.failed for m in measured)
        non_2xx = max(m.result.non_2xx for m in measured)
        invalid = [f"{failed} failed requests"] if failed else []
        invalid += [f"{non_2xx} non-2xx responses"] if non_2xx else []
        invalid += (
            [f"load generator saturated (CPU {loadgen_cpu:.0f}% of a core)"] if saturated else []
        )
        invalid += errors
        restarted = {s: n for s, n in restarts.items() if n}
        invalid += [f"container restarted during the run: {restarted}"] if restarted else []
        cpu_s = cpu_seconds(during)
        served = r.complete or target.requests
        cpu_ms = 1000 * cpu_s / served if cpu_s is not None and served else None
        steadies = [m.steady for m in measured if m.steady is not None]
        steady = statistics.median(steadies) if steadies else None
        ideal = (
            loadmod.ideal_rps(concurrency=target.concurrency, delay=target.delay)
            if target.delay > 0
            else None
        )
        findings = diagnosis.diagnose(
            diagnosis.Evidence(
                result=r,
                delay=target.delay,
                concurrency=target.concurrency,
                requests=target.requests,
                samples=during,
                cpu_ms_per_request=cpu_ms,
                steady_estimate=mid.estimate,
                waves=mid.waves,
                loadgen_cpu_peak_pct=loadgen_cpu,
                cores=_cpu_count(),
                open_file_limits=fd_limits or {},
                processes_by_service={
                    s: int(series.peak("processes") or 1) for s, series in mid.series.items()
                },
                repeat_figures=[m.headline for m in measured if m.headline is not None],
            )
        )
        findings += diagnosis.host_path(dict.fromkeys(c for m in measured for c in m.host_path))
        rps_values = [m.result.rps for m in measured]
        before_rss = _peak("rss_mb", before) if before else None
        return self._base_entry(
            target,
            rps=statistics.median(rps_values),
            time_taken_s=statistics.median(m.result.time_taken_s for m in measured),
            steady_rps=steady,
            waves=mid.waves,
            efficiency=(steady / ideal) if steady is not None and ideal else None,
            failed=failed,
            non_2xx=non_2xx,
            failures=r.failures,
            latency_ms=r.latency_ms,
            mean_latency_ms=r.mean_latency_ms,
            latency_distribution_ms=mid.timeline.distribution() if mid.timeline else [],
            connect_max_ms=r.connect_max_ms,
            threads_before=_peak("threads", before)
            if before
            else (during[0].threads if during else None),
            threads_peak=_peak("threads", during),
            threads_after=during[-1].threads if during else None,
            processes=_peak("processes", during),
            rss_before_mb=before_rss,
            rss_peak_mb=_peak("rss_mb", during),
            # What one more request in flight costs in memory: the growth under load over c.
            rss_per_request_kb=_per_request_kb(
                before=before_rss, peak=_peak("rss_mb", during), concurrency=target.concurrency
            ),
            cpu_peak_pct=_peak("cpu_pct", during),
            cpu_seconds=cpu_s,
            cpu_ms_per_request=cpu_ms,
            loadgen_cpu_peak_pct=loadgen_cpu,
            loadgen_saturated=saturated,
            valid=not invalid,
            invalid_reasons=invalid,
            findings=findings,
            # The target's own notes first (e.g. why a demo runs on a legacy image).
            notes=[*target.notes, *(f.message for f in findings)],
            commands=self._commands(target, network),
            repeats=[
                Repeat(
                    rps=m.result.rps,
                    steady_rps=m.steady,
                    time_taken_s=m.result.time_taken_s,
                    failed=m.result.failed,
                    non_2xx=m.result.non_2xx,
                )
                for m in measured
            ],
            spread=Spread(
                rps=[min(rps_values), max(rps_values)],
                steady_rps=[min(steadies), max(steadies)] if steadies else None,
                relative=diagnosis.relative_spread(
                    [m.headline for m in measured if m.headline is not None]
                ),
            ),
            samples=during,
            error=None,
        )


@dataclass(frozen=True)
class Measured:
    """One repeat: the tool's result, its per-request timeline and the samples around it."""

    result: loadmod.LoadResult
    timeline: Timeline | None
    series: dict[str, Series]  # the app's containers through the load, by service
    before: dict[str, Series]  # the same before any load
    loadgen_cpu: float | None  # the load generator's highest CPU sample
    # What Docker's port-forwarding proxy did to a load sent from the host (playground.hostpath).
    host_path: tuple[str, ...] = ()

    @property
    def estimate(self) -> float | None:
        """c / mean response time (ab) or wrk's own rate, before the steady-state rule."""
        return self.result.steady_rps

    @property
    def waves(self) -> float | None:
        if self.result.tool != "ab":
            # wrk runs for a fixed duration with no start-up phase: its rate is measured.
            return None
        return waves(time_taken_s=self.result.time_taken_s, mean_ms=self.result.mean_latency_ms)

    @property
    def steady(self) -> float | None:
        """The steady figure shown: only with few error answers and, for ab, where the run
        reached a steady state (:func:`playground.diagnosis.steady_holds`)."""
        return (
            self.estimate if diagnosis.steady_holds(result=self.result, waves=self.waves) else None
        )

    @property
    def headline(self) -> float | None:
        """The figure the spread over repeats is judged on: steady, else the measured rate."""
        return self.steady if self.steady is not None else self.result.rps


def median_measurement(measured: list[Measured]) -> Measured:
    """The median repeat by its headline figure supplies latency and sampling figures."""
    order = sorted(measured, key=lambda m: m.headline or 0)
    return order[len(order) // 2]


def _per_request_kb(*, before: float | None, peak: float | None, concurrency: int) -> float | None:
    if before is None or peak is None or concurrency <= 0:
        return None
    return max(peak - before, 0.0) * 1024 / concurrency


@dataclass(frozen=True)
class Failed:
    """A repeat the load tool gave no report for: why, in one line."""

    error: str


def _peak(attr: str, samples: Sequence[Sample]) -> float | None:
    """The highest value of one figure over samples (None without samples)."""
    values: list[float] = [getattr(s, attr) for s in samples]
    return max(values, default=None)


def cpu_seconds(rows: Sequence[Sample]) -> float | None:
    """CPU time the sampled processes used over a series (the integral of cpu_pct)."""
    if len(rows) < 2:
        return None
    return float(sum((b.t - a.t) * b.cpu_pct / 100 for a, b in pairwise(rows)))


def _cpu_count() -> int:
    return os.cpu_count() or 1


def _key(target: Target) -> tuple[str, int]:
    """The key of the entry a load makes (:attr:`playground.model.Entry.key`)."""
    return entry_key({"name": target.name, "concurrency": target.concurrency})


__all__ = ["Plan", "Progress", "Runner", "Series"]

"""One benchmark run: for each compose file, up -> check -> warm up -> load -> down.

Each measurement becomes one results entry, saved as soon as it is finished. Whatever happens
(an error, Ctrl-C, SIGTERM) the scenario that is up is torn down and the load-generator
container removed; finished results are already on disk.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from urllib.parse import urlsplit

from playground.bench import hostpath
from playground.bench.entry import Failed, Measured, measured_figures, new_entry
from playground.bench.plan import Plan, entry_key_of
from playground.bench.steady import parse_timeline
from playground.core import load as loadmod
from playground.core.compose import Docker, DockerError, scenario_up, shown
from playground.core.results import Entry, Run
from playground.core.runstore import RunStore
from playground.core.sampling import (
    ProcReader,
    Sampler,
    Series,
    StatsReader,
    open_files_limit,
    reader_for,
)
from playground.core.target import Target
from playground.core.tools.ab import ab_command
from playground.core.tools.output import LoadOutputError, LoadResult

WARMUP_REQUESTS = 20
# The readers of the app's containers, by service.
Readers = dict[str, ProcReader | StatsReader]


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
    store: RunStore[Run]
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
        done = self.store.run.done()
        if calibration is not None and self.plan.calibration:
            todo = [t for t in self.plan.loads(calibration) if entry_key_of(t) not in done]
            # The ceiling is measured at the plan's main load only.
            if todo:
                self._run_file(todo[0].compose_files, todo[:1], services=calibration.services)
        loads = [
            load
            for target in self.plan.targets
            if target.kind != "calibration"
            for load in self.plan.loads(target)
            if entry_key_of(load) not in done
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

        def failed(error: str) -> None:
            for target in loads:
                if entry_key_of(target) not in self.store.run.done():
                    self._keep(self._error_entry(target, error))

        with scenario_up(
            self.docker,
            compose_file,
            failed=failed,
            warn=self.progress.warn,
            services=services,
            app_services=loads[0].app_services,
            wait_timeout_s=self.plan.wait_timeout_s,
        ) as up:
            network = f"{self.docker.project(compose_file)}_default" if up else ""
            for target in loads if up else ():
                if target.name in stopped:
                    self._keep(self._skipped_entry(target, stopped[target.name]))
                    continue
                entry = self._measure(target, network=network)
                self._keep(entry)
                if self._stopped_scaling(entry):
                    stopped[target.name] = entry

    def _keep(self, entry: Entry) -> None:
        """One more measurement in the run, on disk at once."""
        self.store.run.record(entry)
        self.store.save()

    def _stopped_scaling(self, entry: Entry) -> bool:
        limit = self.plan.stop_below
        return limit is not None and entry.efficiency is not None and entry.efficiency < limit

    def _skipped_entry(self, target: Target, at: Entry) -> Entry:
        reason = (
            f"not run: {target.name} stopped scaling at c={at.concurrency} "
            f"(efficiency {at.efficiency:.0%} < {self.plan.stop_below:.0%})"
        )
        return self._error_entry(target, reason, skipped=True)

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
        argv = ab_command(
            url=target.url(delay=0),
            requests=max(WARMUP_REQUESTS, c),
            concurrency=c,
            timeout_s=30,
            quiet=True,
        )
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
        stem = f"{target.name}-c{target.concurrency}-r{attempt + 1}"
        host_url = target.host_url(delay=target.delay) if self.plan.from_host else None
        tool_argv = self._tool_argv(target, network=network, host_url=host_url, stem=stem)
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
                    name=f"flask-playground-load-{self.store.run.run_id}-{stem}",
                )
        finally:
            self.progress.load_finished(target)
        raw = self.store.raw_dir
        (raw / f"{stem}.txt").write_text(stdout + ("\n--- stderr ---\n" + stderr if stderr else ""))
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
        output = stdout + "\n" + stderr
        tsv_path = raw / f"{stem}.tsv"
        tsv = tsv_path.read_text() if tsv_path.exists() else None
        try:
            result = self.tool(target).parse(
                stdout=output, per_request=tsv, concurrency=target.concurrency
            )
        except LoadOutputError as exc:
            return Failed(
                "; ".join([f"{self.tool_name(target)} exited {exit_code}: {exc}", *host_notes])
            )
        return _measured(result, tsv=tsv, sampler=sampler, before=before, host_notes=host_notes)

    def _tool_argv(
        self, target: Target, *, network: str, host_url: str | None, stem: str
    ) -> list[str]:
        """The load tool's command line, printed first as a reader would type it: the same
        load, from the same network or from the host, without the per-request file."""
        ab = self.tool_name(target) == "ab"
        raw = self.store.raw_dir
        # The tool writes its per-request file into raw/: seen as /out inside the container.
        per_request = (str(raw / f"{stem}.tsv") if host_url else f"/out/{stem}.tsv") if ab else None
        tool_argv = self.tool(target).command(
            url=host_url or self._tool_url(target, network=network),
            requests=target.requests,
            concurrency=target.concurrency,
            timeout_s=self._timeout_s(target),
            duration_s=self.duration(target),
            per_request_path=per_request,
        )
        bare = [a for a in tool_argv if a not in ("-g", per_request)]
        self.progress.echo(
            shown(bare if host_url else self.docker.loadgen_argv(network=network, tool_argv=bare))
        )
        return tool_argv

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
    def _error_entry(self, target: Target, error: str, *, skipped: bool = False) -> Entry:
        return new_entry(
            target,
            tool=self.tool_name(target),
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
        figures = measured_figures(
            target, measured, errors=errors, restarts=restarts, fd_limits=fd_limits or {}
        )
        return new_entry(
            target,
            tool=self.tool_name(target),
            commands=self._commands(target, network),
            **figures,
        )


def _measured(
    result: LoadResult,
    *,
    tsv: str | None,
    sampler: Sampler,
    before: dict[str, Series],
    host_notes: list[str],
) -> Measured:
    """One repeat the tool reported on, with its timeline (when ab's file reads) and samples."""
    loadgen = sampler.series.pop("__loadgen__")
    try:
        timeline = parse_timeline(tsv) if tsv else None
    except LoadOutputError:
        timeline = None  # the tool's report stands; only the steady figure is lost
    return Measured(
        result=result,
        timeline=timeline,
        series=sampler.series,
        before=before,
        loadgen_cpu=loadgen.peak("cpu_pct"),
        host_path=tuple(host_notes),
    )


__all__ = ["Progress", "Runner"]

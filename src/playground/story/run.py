"""Runs the story mode by mode: up, load and sample, collect, down; never loses a result.

For each mode: bring its compose file up, start the server-side sampler, run the open-loop
generator in the load-generator container on the scenario's network (it sends the incident
to slow_api at its time), read nginx's access log, bring everything down. story.json is
written after every mode, so an interrupted run keeps the modes it finished.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from playground.compose import Docker, DockerError, shown
from playground.load import AbTool, LoadOutputError, ab_rows
from playground.results import write_json_atomic
from playground.sampling import wait_for
from playground.story import analysis
from playground.story.closedloop import summarise_ab
from playground.story.plan import (
    API_PORT,
    Mode,
    StorySettings,
    SweepSettings,
    ab_args,
    incident_url,
    loadgen_argv,
    openloop_args,
    sweep_step_args,
)
from playground.story.serverside import ServerSampler, Targets, fetch_text, parse_access_log
from playground.story.sweep import summarise_step

# Beyond the schedule, a run may take every attempt's timeout and refresh, plus start-up.
SLACK_S = 120


@dataclass
class StoryRun:
    run_dir: Path
    data: dict

    @property
    def path(self) -> Path:
        return self.run_dir / "story.json"

    def save(self) -> None:
        write_json_atomic(self.path, self.data)


def _targets(docker: Docker, mode: Mode) -> Targets:
    def cid(service: str) -> str:
        found = docker.container_id(mode.compose_file, service)
        if not found:
            raise DockerError(f"{mode.compose_file}: no {service} container is running")
        return found

    app, ingress, api = cid("flask_app"), cid("ingress"), cid("slow_api")
    return Targets(
        app_pid=docker.main_pid(app),
        app_container=app,
        app_ip=docker.ip_address(app, network=mode.network),
        ingress_ip=docker.ip_address(ingress, network=mode.network),
        api_ip=docker.ip_address(api, network=mode.network),
        uwsgi_stats=mode.server == "uwsgi",
    )


def _bring_up(docker: Docker, mode: Mode) -> Targets:
    docker.up(mode.compose_file)
    targets = _targets(docker, mode)
    if targets.ingress_ip and not wait_for(
        lambda: fetch_text(f"http://{targets.ingress_ip}:8081/stub_status") is not None,
        timeout=30,
        step=0.2,
    ):
        raise DockerError(f"{mode.name}: nginx's stub_status did not answer within 30 s")
    return targets


def _upstream_in_flight(targets: Targets) -> int | None:
    body = fetch_text(f"http://{targets.api_ip}:{API_PORT}/control/stats")
    try:
        return int(json.loads(body)["in_flight"]) if body else None
    except (ValueError, KeyError, TypeError):
        return None


def _settle(targets: Targets, *, limit: float) -> float | None:
    """Wait until nothing waits on the third party for two looks a second apart (the last
    step's backlog is gone); the seconds it took, None if it was still busy at `limit`."""
    started = time.monotonic()
    quiet = 0
    while time.monotonic() - started < limit:
        quiet = quiet + 1 if _upstream_in_flight(targets) == 0 else 0
        if quiet >= 2:
            return round(time.monotonic() - started, 1)
        time.sleep(1.0)
    return None


def _access_log(docker: Docker, mode: Mode) -> str:
    ingress = docker.container_id(mode.compose_file, "ingress")
    log = (
        docker.run(
            ["docker", "exec", ingress, "cat", "/tmp/access.log"],
            check=False,
            quiet=True,
            timeout=60,
        )
        if ingress
        else None
    )
    return log.stdout if log is not None else ""


def run_mode(
    *,
    docker: Docker,
    mode: Mode,
    settings: StorySettings,
    raw_dir: Path,
    info: Callable[[str], None],
) -> dict:
    """One mode through the whole schedule; its entry for story.json."""
    out_name = f"openloop-{mode.name}.json"
    tool = openloop_args(settings, out=f"/out/{out_name}")
    argv = loadgen_argv(
        network=mode.network,
        out_dir=str(raw_dir),
        uid=os.getuid(),
        gid=os.getgid(),
        name=f"story-load-{mode.name}",
        tool_argv=tool,
    )
    entry: dict = {
        "mode": mode.name,
        "pool": mode.pool,
        "server": mode.server,
        "compose_file": mode.compose_file,
        "commands": [shown(docker.compose(mode.compose_file, "up", "-d", "--wait")), shown(argv)],
    }
    docker.down(mode.compose_file)
    try:
        targets = _bring_up(docker, mode)
        info(
            f"{mode.name}: {settings.duration:g} s of load, the incident at "
            f"{settings.before_s:g} s for {settings.incident_s:g} s"
        )
        with ServerSampler(targets) as sampler:
            proc = docker.run(
                argv,
                check=False,
                timeout=settings.duration
                + settings.max_attempts * (settings.timeout + settings.refresh_delay)
                + SLACK_S,
            )
        entry["generator_exit"] = proc.returncode
        entry["generator_stderr"] = proc.stderr.strip()[-2000:]
        access_text = _access_log(docker, mode)
        (raw_dir / f"access-{mode.name}.log").write_text(access_text)
        entry["server_samples"] = sampler.samples
    finally:
        docker.down(mode.compose_file)
    result_path = raw_dir / out_name
    if not result_path.exists():
        raise DockerError(
            f"{mode.name}: the generator wrote no result "
            f"(exit {entry['generator_exit']}): {entry['generator_stderr']}"
        )
    result = json.loads(result_path.read_text())
    entry.update(
        analyse(
            result=result,
            samples=entry.pop("server_samples"),
            access_text=access_text,
            settings=settings,
        )
    )
    return entry


def analyse(
    *, result: dict, samples: Sequence[dict], access_text: str, settings: StorySettings
) -> dict:
    """The generator's rows, the server samples and the access log, as one mode's entry."""
    attempts = analysis.attempts_from(result)
    seconds = int(settings.duration) + 1
    rows = analysis.per_second(
        attempts, seconds=seconds, server=samples, t0_monotonic=result["t0_monotonic"]
    )
    access = [
        (r.end_wall - result["t0_wall"], r.status, r.request_time)
        for r in parse_access_log(access_text)
    ]
    for t, status, _ in access:
        s = int(t)
        if 0 <= s < len(rows):
            rows[s]["nginx_499"] = rows[s].get("nginx_499", 0) + (status == 499)
            rows[s]["nginx_5xx"] = rows[s].get("nginx_5xx", 0) + (500 <= status < 600)
    events = result.get("events") or []
    incident_start = events[0]["sent"] if events else settings.before_s
    return {
        "check": result["check"],
        "loop": result.get("loop"),
        "incident": {
            "start": incident_start,
            "seconds": settings.incident_s,
            "control": events[0] if events else None,
        },
        "adds_up": analysis.check_adds_up(attempts, rows),
        "summary": analysis.summarise(
            attempts=attempts,
            rows=rows,
            incident_start=incident_start,
            incident_s=settings.incident_s,
            arrivals_end=settings.duration,
            timeout=settings.timeout,
            access=access,
        ),
        "seconds": rows,
    }


def run_story(
    *,
    docker: Docker,
    modes: Sequence[Mode],
    settings: StorySettings,
    store: StoryRun,
    info: Callable[[str], None],
    warn: Callable[[str], None],
    incident: bool = True,
    closed_loop: bool = False,
) -> None:
    """Mode by mode: the incident with the open loop and/or the same incident with ab (the
    closed loop); story.json after each mode."""
    raw_dir = store.run_dir / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    for mode in modes if incident or closed_loop else ():
        started = time.monotonic()
        entry: dict = {"mode": mode.name, "pool": mode.pool, "server": mode.server}
        try:
            if incident:
                entry = run_mode(
                    docker=docker, mode=mode, settings=settings, raw_dir=raw_dir, info=info
                )
        except DockerError as exc:
            warn(f"{mode.name}: {exc}")
            entry["error"] = str(exc)
        if closed_loop:
            try:
                entry["closed_loop"] = run_closed_loop(
                    docker=docker, mode=mode, settings=settings, raw_dir=raw_dir, info=info
                )
            except DockerError as exc:
                warn(f"{mode.name} (ab): {exc}")
                entry["closed_loop_error"] = str(exc)
        entry["wall_s"] = round(time.monotonic() - started, 1)
        store.data["modes"].append(entry)
        store.save()
        if "summary" in entry:
            s = entry["summary"]
            info(
                f"{mode.name}: goodput {s['goodput_before'] or 0:.0f}/s before, "
                f"{s['goodput_during'] or 0:.0f}/s during, {s['goodput_after'] or 0:.0f}/s "
                f"after; amplification {s['amplification'] or 0:.2f}; "
                f"{'valid' if entry['check']['valid'] else 'INVALID'}"
            )


def run_sweep_mode(
    *,
    docker: Docker,
    mode: Mode,
    settings: StorySettings,
    sweep: SweepSettings,
    raw_dir: Path,
    info: Callable[[str], None],
) -> dict:
    """One mode through every rate of the sweep, on one bring-up; its entry for
    story.json's `sweep.modes`. Between steps the servers drain (see `_settle`)."""
    entry: dict = {
        "mode": mode.name,
        "pool": mode.pool,
        "server": mode.server,
        "capacity_per_s": (sweep.capacity(settings) if mode.pool == "threads" else None),
        "commands": [shown(docker.compose(mode.compose_file, "up", "-d", "--wait"))],
        "steps": [],
    }
    docker.down(mode.compose_file)
    try:
        targets = _bring_up(docker, mode)
        for rate in sweep.rates:
            settled = _settle(targets, limit=sweep.settle_s)
            out_name = f"sweep-{mode.name}-{rate:g}.json"
            argv = loadgen_argv(
                network=mode.network,
                out_dir=str(raw_dir),
                uid=os.getuid(),
                gid=os.getgid(),
                name=f"story-sweep-{mode.name}",
                tool_argv=sweep_step_args(settings, sweep, rate=rate, out=f"/out/{out_name}"),
            )
            entry["commands"].append(shown(argv))
            info(
                f"{mode.name}: {rate:g} visits/s for {sweep.step_s:g} s, the third party at "
                f"{sweep.delay:g} s"
            )
            proc = docker.run(
                argv,
                check=False,
                timeout=sweep.step_s
                + settings.max_attempts * (settings.timeout + settings.refresh_delay)
                + SLACK_S,
            )
            path = raw_dir / out_name
            if not path.exists():
                raise DockerError(
                    f"{mode.name} at {rate:g}/s: the generator wrote no result "
                    f"(exit {proc.returncode}): {proc.stderr.strip()[-500:]}"
                )
            result = json.loads(path.read_text())
            step = replace(
                summarise_step(
                    attempts=analysis.attempts_from(result),
                    check=result["check"],
                    rate=rate,
                    warmup_s=sweep.warmup_s,
                    measure_s=sweep.measure_s,
                ),
                settled_before_s=settled,
            )
            entry["steps"].append(step.as_dict())
            info(
                f"{mode.name} at {rate:g}/s: goodput {step.goodput_per_s:.1f}/s, attempts "
                f"{step.attempts_per_s:.1f}/s, {step.timeouts} timeouts; "
                f"{'valid' if step.valid else 'INVALID'}"
            )
    finally:
        docker.down(mode.compose_file)
    return entry


def _send_incident(url: str, at_wall: float, sent: list[float]) -> None:
    """POST the control request at `at_wall`; `sent` gets its send time once slow_api took it."""
    time.sleep(max(0.0, at_wall - time.time()))
    started = time.time()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10):
            sent.append(started)
    except OSError:
        pass  # the caller finds `sent` empty and says so


def run_closed_loop(
    *,
    docker: Docker,
    mode: Mode,
    settings: StorySettings,
    raw_dir: Path,
    info: Callable[[str], None],
) -> dict:
    """The same incident with ab instead of the open loop: ab runs for the story's duration
    at c connections; the control request goes to slow_api (from this host, at its address
    on the scenario's network) `before_s` after ab starts. Returns `modes[].closed_loop`."""
    tsv = f"ab-{mode.name}.tsv"
    tool = ab_args(settings, gnuplot=f"/out/{tsv}")
    argv = loadgen_argv(
        network=mode.network,
        out_dir=str(raw_dir),
        uid=os.getuid(),
        gid=os.getgid(),
        name=f"story-ab-{mode.name}",
        tool_argv=tool,
    )
    c = settings.closed_loop_concurrency
    docker.down(mode.compose_file)
    try:
        targets = _bring_up(docker, mode)
        if not targets.api_ip:
            raise DockerError(f"{mode.name}: slow_api has no address on {mode.network}")
        info(
            f"{mode.name}: ab -c {c} for {settings.duration:g} s, the incident at "
            f"{settings.before_s:g} s for {settings.incident_s:g} s"
        )
        sent: list[float] = []
        control = threading.Thread(
            target=_send_incident,
            daemon=True,
            args=(
                incident_url(settings, host=targets.api_ip),
                time.time() + settings.before_s,
                sent,
            ),
        )
        control.start()
        proc = docker.run(argv, check=False, timeout=settings.duration + SLACK_S)
        control.join(timeout=15)
        access_text = _access_log(docker, mode)
        (raw_dir / f"ab-access-{mode.name}.log").write_text(access_text)
    finally:
        docker.down(mode.compose_file)
    (raw_dir / f"ab-{mode.name}.txt").write_text(proc.stdout + proc.stderr)
    if not sent:
        raise DockerError(f"{mode.name}: the incident was never sent to slow_api")
    try:
        result = AbTool().parse(stdout=proc.stdout + proc.stderr, per_request=None, concurrency=c)
        rows = ab_rows((raw_dir / tsv).read_text())
    except (LoadOutputError, OSError) as exc:
        raise DockerError(
            f"{mode.name}: ab gave no report (exit {proc.returncode}): {exc}"
        ) from None
    closed = summarise_ab(
        requests=rows,
        result=result,
        concurrency=c,
        incident_wall=sent[0],
        incident_s=settings.incident_s,
    )
    statuses: dict[str, int] = {}
    for r in parse_access_log(access_text):
        statuses[str(r.status)] = statuses.get(str(r.status), 0) + 1
    entry = {
        **closed.as_dict(),
        "nginx_statuses": statuses,
        "incident_control": incident_url(settings) + f" at {settings.before_s:g} s",
        "commands": [
            shown(docker.compose(mode.compose_file, "up", "-d", "--wait")),
            shown(argv),
            f"curl -X POST '{incident_url(settings)}'  "
            f"# {closed.incident_at_s:.1f} s after ab's start",
        ],
    }
    b, d, a = (closed.phase(n).per_s or 0 for n in ("before", "during", "after"))
    info(
        f"{mode.name} (ab): {b:.0f} → {d:.0f} → {a:.0f} requests/s, {closed.failed} failed, "
        f"max {closed.latency_max_s or 0:.1f} s"
    )
    return entry


def run_sweep(
    *,
    docker: Docker,
    modes: Sequence[Mode],
    settings: StorySettings,
    sweep: SweepSettings,
    store: StoryRun,
    info: Callable[[str], None],
    warn: Callable[[str], None],
) -> None:
    raw_dir = store.run_dir / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    store.data["sweep"] = {"settings": sweep.as_dict(), "modes": []}
    for mode in modes:
        started = time.monotonic()
        try:
            entry = run_sweep_mode(
                docker=docker, mode=mode, settings=settings, sweep=sweep, raw_dir=raw_dir, info=info
            )
        except DockerError as exc:
            warn(f"{mode.name} (sweep): {exc}")
            entry = {"mode": mode.name, "pool": mode.pool, "server": mode.server, "error": str(exc)}
        entry["wall_s"] = round(time.monotonic() - started, 1)
        store.data["sweep"]["modes"].append(entry)
        store.save()

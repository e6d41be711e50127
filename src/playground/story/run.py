"""Runs the story mode by mode: up, load and sample, collect, down; never loses a result.

For each mode: bring its compose file up, start the server-side sampler, run the open-loop
generator in the load-generator container on the scenario's network (it sends the incident
to slow_api at its time), read nginx's access log, bring everything down. story.json is
written after every mode, so an interrupted run keeps the modes it finished.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from playground.compose import Docker, DockerError, shown
from playground.results import write_json_atomic
from playground.sampling import wait_for
from playground.story import analysis
from playground.story.plan import Mode, StorySettings, loadgen_argv, openloop_args
from playground.story.serverside import ServerSampler, Targets, fetch_text, parse_access_log

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
    return Targets(app_pid=docker.main_pid(app), app_container=app,
                   app_ip=docker.ip_address(app, network=mode.network),
                   ingress_ip=docker.ip_address(ingress, network=mode.network),
                   api_ip=docker.ip_address(api, network=mode.network),
                   uwsgi_stats=mode.server == "uwsgi")


def run_mode(*, docker: Docker, mode: Mode, settings: StorySettings, raw_dir: Path,
             info: Callable[[str], None]) -> dict:
    """One mode through the whole schedule; its entry for story.json."""
    out_name = f"openloop-{mode.name}.json"
    tool = openloop_args(settings, out=f"/out/{out_name}")
    argv = loadgen_argv(network=mode.network, out_dir=str(raw_dir), uid=os.getuid(),
                        gid=os.getgid(), name=f"story-load-{mode.name}", tool_argv=tool)
    entry: dict = {"mode": mode.name, "pool": mode.pool, "server": mode.server,
                   "compose_file": mode.compose_file,
                   "commands": [shown(docker.compose(mode.compose_file, "up", "-d", "--wait")),
                                shown(argv)]}
    docker.down(mode.compose_file)
    try:
        docker.up(mode.compose_file)
        targets = _targets(docker, mode)
        if targets.ingress_ip and not wait_for(
                lambda: fetch_text(f"http://{targets.ingress_ip}:8081/stub_status") is not None,
                timeout=30, step=0.2):
            raise DockerError(f"{mode.name}: nginx's stub_status did not answer within 30 s")
        info(f"{mode.name}: {settings.duration:g} s of load, the incident at "
             f"{settings.before_s:g} s for {settings.incident_s:g} s")
        with ServerSampler(targets) as sampler:
            proc = docker.run(argv, check=False,
                              timeout=settings.duration + settings.max_attempts
                              * (settings.timeout + settings.refresh_delay) + SLACK_S)
        entry["generator_exit"] = proc.returncode
        entry["generator_stderr"] = proc.stderr.strip()[-2000:]
        ingress = docker.container_id(mode.compose_file, "ingress")
        log = docker.run(["docker", "exec", ingress, "cat", "/tmp/access.log"], check=False,
                         quiet=True, timeout=60) if ingress else None
        access_text = log.stdout if log is not None else ""
        (raw_dir / f"access-{mode.name}.log").write_text(access_text)
        entry["server_samples"] = sampler.samples
    finally:
        docker.down(mode.compose_file)
    result_path = raw_dir / out_name
    if not result_path.exists():
        raise DockerError(f"{mode.name}: the generator wrote no result "
                          f"(exit {entry['generator_exit']}): {entry['generator_stderr']}")
    result = json.loads(result_path.read_text())
    entry.update(analyse(result=result, samples=entry.pop("server_samples"),
                         access_text=access_text, settings=settings))
    return entry


def analyse(*, result: dict, samples: Sequence[dict], access_text: str,
            settings: StorySettings) -> dict:
    """The generator's rows, the server samples and the access log, as one mode's entry."""
    attempts = analysis.attempts_from(result)
    seconds = int(settings.duration) + 1
    rows = analysis.per_second(attempts, seconds=seconds, server=samples,
                               t0_monotonic=result["t0_monotonic"])
    access = [(r.end_wall - result["t0_wall"], r.status, r.request_time)
              for r in parse_access_log(access_text)]
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
        "incident": {"start": incident_start, "seconds": settings.incident_s,
                     "control": events[0] if events else None},
        "adds_up": analysis.check_adds_up(attempts, rows),
        "summary": analysis.summarise(attempts=attempts, rows=rows,
                                      incident_start=incident_start,
                                      incident_s=settings.incident_s,
                                      arrivals_end=settings.duration, timeout=settings.timeout,
                                      access=access),
        "seconds": rows,
    }


def run_story(*, docker: Docker, modes: Sequence[Mode], settings: StorySettings,
              store: StoryRun, info: Callable[[str], None],
              warn: Callable[[str], None]) -> None:
    raw_dir = store.run_dir / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    for mode in modes:
        started = time.monotonic()
        try:
            entry = run_mode(docker=docker, mode=mode, settings=settings, raw_dir=raw_dir,
                             info=info)
        except DockerError as exc:
            warn(f"{mode.name}: {exc}")
            entry = {"mode": mode.name, "pool": mode.pool, "server": mode.server,
                     "error": str(exc)}
        entry["wall_s"] = round(time.monotonic() - started, 1)
        store.data["modes"].append(entry)
        store.save()
        if "summary" in entry:
            s = entry["summary"]
            info(f"{mode.name}: goodput {s['goodput_before'] or 0:.0f}/s before, "
                 f"{s['goodput_during'] or 0:.0f}/s during, {s['goodput_after'] or 0:.0f}/s "
                 f"after; amplification {s['amplification'] or 0:.2f}; "
                 f"{'valid' if entry['check']['valid'] else 'INVALID'}")

"""A by-hand generator run kept as a story run: the JSON the `docker run ... openloop.py`
command of docs/story.md prints becomes `results/<run-id>/results.json` like any run's, so
`playground report` draws it and `playground compare` sets it beside another.

The generator's output carries its own settings: the rate, the users' patience and reloads,
the seed, and the control request sent at the incident's time (`--at`), whose query says how
much slower the dependency became and for how long (`extra=` and `seconds=`, slow_api's
control and the delay proxy's alike). The page's own `delay=` is the normal delay where the
URL has one. Only the generator's side is known: no server was sampled.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from pathlib import Path
from typing import Any

from playground.core.jsonmodel import ModelError
from playground.core.runstore import RunStore, new_run_id
from playground.incident import analysis
from playground.incident.outside import OutsideTarget
from playground.incident.settings import StoryError, StorySettings
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.story import findings
from playground.story.run import measure_incident


def is_generator_output(path: Path) -> bool:
    """A file the generator wrote (its `tool` is `openloop`), not a run's results.json."""
    if not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            head = fh.read(200)
    except OSError:
        return False
    return '"tool":"openloop"' in head.replace(" ", "")


def _query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).items()}


def _number(values: dict[str, str], key: str, default: float, where: str) -> float:
    try:
        return float(values[key]) if key in values else default
    except ValueError:
        raise StoryError(f"{where}: {key}={values[key]!r} is not a number") from None


def settings_of(data: dict[str, Any], *, where: str) -> StorySettings:
    """The story's settings from what the generator recorded of its own."""
    g = data.get("settings") or {}
    phases = g.get("phases") or []
    rates = {p.get("rate") for p in phases}
    if len(rates) != 1:
        raise StoryError(f"{where}: the story's users arrive at one rate; this run had {rates}")
    events = g.get("events") or []
    d = StorySettings()
    duration = float(g.get("duration") or 0)
    normal = _number(_query(str(g.get("url", ""))), "delay", d.normal_delay, where)
    if events:
        control = _query(str(events[0].get("url", "")))
        before = float(events[0].get("at", 0))
        extra = _number(control, "extra", d.extra_delay, where)
        incident = _number(control, "seconds", d.incident_s, where)
    else:
        raise StoryError(f"{where}: the run sent no incident (no --at): there is no story to tell")
    return StorySettings(
        rate=float(rates.pop()),
        normal_delay=normal,
        incident_delay=normal + extra,
        before_s=before,
        incident_s=incident,
        after_s=max(0.0, duration - before - incident),
        timeout=float(g.get("timeout") or d.timeout),
        refresh_delay=float(g.get("refresh_delay", d.refresh_delay)),
        refresh_backoff=float(g.get("refresh_backoff", d.refresh_backoff)),
        max_attempts=int(g.get("max_attempts", d.max_attempts)),
        arrival=str(g.get("arrival", d.arrival)),
        seed=int(g.get("seed", d.seed)),
    )


def keep(path: Path, *, results_dir: Path, name: str, command: str) -> Path:
    """The generator's output at `path` as a new story run in `results_dir`: its folder."""
    where = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        output = analysis.generator_output(data)
    except (OSError, ValueError, ModelError) as exc:
        raise StoryError(f"{where}: not the generator's output: {exc}") from None
    settings = settings_of(data, where=where)
    url = str((data.get("settings") or {}).get("url", ""))
    run = StoryRun(
        run_id=new_run_id() + "-story",
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(output.t0_wall)),
        command=command,
        story=settings,
    )
    entry = StoryTarget(
        name=name,
        title=f"{name} ({url}, a by-hand generator run)",
        commands=[f"# the generator's output, kept from {path.name}"],
        outside=OutsideTarget(
            url=url,
            network="-",
            mechanism="by-hand",
            dependency=str(output.events[0].get("url")) if output.events else None,
            added_delay_s=settings.extra_delay,
        ),
    )
    entry = measure_incident(entry, output=output, samples=[], access_text="", settings=settings)
    entry.findings = findings.for_target(entry)
    run.targets.append(entry)
    run.finished_at = run.started_at
    store = RunStore.create_run(results_dir=results_dir, run=run)
    (store.raw_dir / path.name).write_bytes(path.read_bytes())
    return store.run_dir

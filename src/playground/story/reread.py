"""A stored story run's candidates for what decides a collapse, read again from its raw files.

A story run keeps what its figures come from under raw/: the generator's output, nginx's access
log, slow_api's calls log and the app's timing log, per target and repeat. The candidates
(:mod:`playground.incident.mechanism`) are figures of those files, so when the candidates gain
a figure a stored run gets it by reading its raw files again through the same function the
runner calls, without measuring again, and nothing else in the run changes:

    .venv/bin/python -m playground.story.reread results/RUN_ID
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from playground.core import runstore
from playground.incident import analysis, mechanism
from playground.incident.mechanism import Mechanism
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.story.serverside import parse_access_log, parse_calls_log, parse_timing_log


def stem(run: StoryRun, t: StoryTarget) -> str:
    """The raw files' name of a measurement, as the runner names them (story/run.py `_stem`)."""
    base = f"{t.name}-{run.story.incident_delay:g}s-{t.repeat}"
    return base + (f"-try{len(t.invalid_tries) + 1}" if t.invalid_tries else "")


def from_texts(
    *,
    output: analysis.GeneratorOutput,
    start_s: float,
    texts: dict[str, str],
    rows: Sequence[object],
    steal_share: float | None,
    incident_delay: float,
    incident_s: float | None = None,
    per_worker: int | None = None,
) -> Mechanism | None:
    """A measurement's candidates from its logs' texts (`texts`: timing, access, calls), the
    same for the runner and for a stored run (`per_worker`: each worker's threads); None
    without the app's timing log."""
    timings = parse_timing_log(texts.get("timing", ""))
    if not timings:
        return None
    return mechanism.candidates(
        onset=mechanism.Onset(t0_wall=output.t0_wall, start_s=start_s),
        timings=timings,
        access=parse_access_log(texts.get("access", "")),
        calls=parse_calls_log(texts.get("calls", "")),
        rows=rows,
        sent=[(a.attempt, a.sent) for a in output.attempts],
        steal_share=steal_share,
        incident_delay=incident_delay,
        incident_s=incident_s,
        per_worker=per_worker,
    )


def mechanism_of(run: StoryRun, t: StoryTarget, raw: Path) -> Mechanism | None:
    """The measurement's candidates from its raw files; None where it has no timing log (a
    run measured before the app kept one) or no incident."""
    name = stem(run, t)
    output_path = raw / f"openloop-{name}.json"
    if t.incident is None or not output_path.exists():
        return None
    paths = {k: raw / f"{k}-{name}.log" for k in ("timing", "access", "calls")}
    return from_texts(
        output=analysis.generator_output(json.loads(output_path.read_text())),
        start_s=t.incident.start,
        texts={k: p.read_text() if p.exists() else "" for k, p in paths.items()},
        rows=t.seconds,
        steal_share=None if t.steal is None else t.steal.share,
        incident_delay=run.story.incident_delay,
        incident_s=t.incident.seconds,
        per_worker=t.per_worker,
    )


def reread(path: Path) -> int:
    """Reads every measurement's candidates again and rewrites the run's results.json (one
    atomic write); how many measurements have candidates."""
    run = StoryRun.from_json(runstore.read(path))
    raw = path.parent / "raw"
    run.targets = [replace(t, mechanism=mechanism_of(run, t, raw)) for t in run.targets]
    runstore.write_json_atomic(path, run.to_json())
    return sum(t.mechanism is not None for t in run.targets)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m playground.story.reread RESULTS_DIR/RUN_ID", file=sys.stderr)
        return 2
    path = Path(args[0]) / "results.json"
    if not path.exists():
        print(f"no story run at {args[0]} (no results.json there)", file=sys.stderr)
        return 2
    print(f"{path}: candidates for {reread(path)} measurement(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

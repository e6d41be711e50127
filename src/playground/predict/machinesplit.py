"""The split of the machine a prediction is for: `playground predict --shares-from RUN`.

Which of gthread's two workers the kernel wakes to accept moves from repeat to repeat, and
from machine to machine too: on the fit run's machine the busiest worker began 0.66-0.72 of
the requests before the incident, on another 0.79-0.85 in every one of three runs
(docs/predict.md, "Scored where a pool tips"). A story run measured on the machine a
prediction is for hands the model that machine's shares: per trusted repeat of each gthread
target it measured, the busiest worker's share of the requests begun before the incident
(:attr:`playground.incident.mechanism.Mechanism.busiest_share_begun_before`), with the front
its workers sat behind and the rate it was measured at. The run is named by its record's id
(docs/runs/RUN.json) or by its results (an id or a path under the results folder, or
`latest`). Its repeats fit the prediction, so they never score it.
"""

from __future__ import annotations

from pathlib import Path

from playground.core import records, runstore
from playground.core.errors import UsageError
from playground.core.results import RESULTS_FILE
from playground.incident import runrecords
from playground.incident.runrecords import RunRecord
from playground.incident.settings import MeasuredSplit
from playground.incident.storyresults import StoryRun
from playground.predict import measured
from playground.predict.measured import FRONTS

#: Trusted repeats a run needs before its shares stand in for the fit run's: Silverman's
#: bandwidth needs a spread, and fewer than three give hardly one.
MIN_REPEATS = 3


def _record(ref: str, results_dir: Path) -> RunRecord:
    """The run `ref` names, as its record: the committed one, or one made from its results."""
    committed = records.RECORDS_DIR / f"{ref}.json"
    if committed.exists():
        return runrecords.load(committed)
    path = runstore.resolve_run(results_dir, ref)
    data = runstore.read(path / RESULTS_FILE if path.is_dir() else path)
    if data.get("kind") != "story":
        kind = data.get("kind")
        raise UsageError(f"--shares-from takes a measured story run; {ref} is a {kind} run")
    return runrecords.from_run(StoryRun.from_json(data), machine="")


def splits_of(record: RunRecord) -> tuple[MeasuredSplit, ...]:
    """Per front (:data:`.measured.FRONTS`) whose gthread target the run measured, its trusted
    repeats' busiest shares; refused where no front has enough of them."""
    rate = record.story_settings().rate
    found = []
    for front, target in FRONTS.items():
        shares = measured.begun_before(measured.trusted_repeats(record, target))
        if len(shares) >= MIN_REPEATS:
            found.append(MeasuredSplit(record.run_id, front, rate, tuple(shares)))
    if not found:
        names = " or ".join(FRONTS.values())
        raise UsageError(
            f"--shares-from {record.run_id}: it needs {MIN_REPEATS} or more trusted repeats "
            f"of {names} with the split measured"
        )
    return tuple(found)


def load(ref: str, results_dir: Path) -> tuple[MeasuredSplit, ...]:
    """The splits of the story run `ref` names (:func:`splits_of`)."""
    return splits_of(_record(ref, results_dir))

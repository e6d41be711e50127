"""docs/story.md's table "Through the incident", written again from the record of the run it
cites: each target's repeats held (k of n), and the median with its range of the figures the
record keeps. The table sits between markers that name the run by its label in the page's runs table; the test prints the table it
expects, so a run measured again is pasted in, never typed.

No Docker: the page and the record are read as files.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace

from playground.core import records
from playground.core.odds import Frequency
from playground.incident import held, runrecords
from playground.incident.runrecords import TargetRecord
from tests.unit.test_docs import RUN_ID, runs_table
from tests.unit.test_story_odds import STORY

BLOCK = re.compile(r"<!-- kept: through-the-incident (\S+) -->\n(.*?)\n<!-- /kept -->", re.S)
HEADER = (
    "| mode | held | goodput/s during | visits served during | time to recover | attempts/visit |",
    "|---|---|---|---|---|---|",
)


def spread(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """The median, and the range where the repeats differ: `72% (49-82)`."""
    middle = fmt(statistics.median(values))
    low, high = fmt(min(values)), fmt(max(values))
    return middle if low == high else f"{middle} ({low.rstrip('%s ')}-{high.rstrip('%s ')})"


def recovered(found: Sequence[TargetRecord], after_s: float) -> str:
    """Time to recover over the repeats that did, and how many did not within the run."""
    times = [t.recovery_s for t in found if t.recovery_s is not None]
    text = spread(times, lambda x: f"{x:.0f} s") if times else ""
    missing = len(found) - len(times)
    if not missing:
        return text
    out = f"not within {after_s:.0f} s in {missing} of {len(found)}"
    return f"{text}; {out}" if text else out


def table(record: runrecords.RunRecord) -> list[str]:
    """The table as the page gives it: a row per target, in the record's order."""
    names = list(dict.fromkeys(t.name for t in record.targets))
    after_s = record.story_settings().after_s
    rows = list(HEADER)
    for name in names:
        found = [t for t in record.targets if t.name == name and t.valid is True]
        served = [t.visits_served_during for t in found if t.visits_served_during is not None]
        goodput = [t.goodput_during for t in found if t.goodput_during is not None]
        attempts = [t.attempts_per_visit for t in found if t.attempts_per_visit is not None]
        holds = Frequency(sum(t.verdict == held.HELD for t in found), len(found))
        rows.append(
            f"| {name} | {holds.text()} | {spread(goodput, lambda x: f'{x:.1f}')} "
            f"| {spread(served, lambda x: f'{100 * x:.0f}%')} | {recovered(found, after_s)} "
            f"| {spread(attempts, lambda x: f'{x:.2f}')} |"
        )
    return rows


def test_the_table_through_the_incident_is_its_runs_record_written_again() -> None:
    text = STORY.read_text(encoding="utf-8")
    found = BLOCK.search(text)
    assert found, "story.md's table through the incident has lost its markers"
    (run_id,) = RUN_ID.findall(runs_table(text)[found[1]]["run id"])
    (path,) = records.RECORDS_DIR.glob(f"{run_id}*.json")
    record = runrecords.load(path)
    assert record.source == runrecords.RECORDED, "the table rests on a transcribed record"
    expected = table(record)
    assert found[2].splitlines() == expected, "\n" + "\n".join(expected)


def test_the_table_changes_with_its_record() -> None:
    """It can fail: a repeat that held in place of one that collapsed moves the count."""
    record = runrecords.load(records.RECORDS_DIR / "20261128-170208-story.json")
    changed = [
        replace(t, verdict=held.HELD, visits_served_during=1.0)
        if t.name == "gunicorn-threads" and t.repeat == 1
        else t
        for t in record.targets
    ]
    other = replace(record, targets=changed)
    assert table(other) != table(record)

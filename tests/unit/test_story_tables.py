"""docs/story.md's tables of kept runs ("Through the incident", "Gunicorn's pool"), written
again from the records of the runs they cite: each target's repeats held (k of n), and the
median with its range of the figures the records keep. A table sits between markers that name
it and its runs by their labels in the page's runs table
(`<!-- kept: through-the-incident EH -->`); the test prints the table it expects, so a run
measured again is pasted in, never typed.

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

BLOCK = re.compile(r"<!-- kept: ([\w-]+) ([A-Z ]+) -->\n(.*?)\n<!-- /kept -->", re.S)
HEADER = (
    "| target | held | goodput/s during | visits served during | time to recover | attempts/visit |",
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


def table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """The table as the page gives it: a row per target, in the records' order."""
    names = list(dict.fromkeys(t.name for r in kept for t in r.targets))
    (after_s,) = {r.story_settings().after_s for r in kept}
    rows = list(HEADER)
    for name in names:
        found = [t for r in kept for t in r.targets if t.name == name and t.valid is True]
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


def blocks(text: str) -> list[tuple[str, list[runrecords.RunRecord], list[str]]]:
    """Each kept table of a page: its name, the records of the runs it names, its lines."""
    runs = runs_table(text)
    found = []
    for name, labels, body in BLOCK.findall(text):
        ids = [i for label in labels.split() for i in RUN_ID.findall(runs[label]["run id"])]
        paths = [p for i in ids for p in records.RECORDS_DIR.glob(f"{i}*.json")]
        assert len(paths) == len(ids), f"{name}: a run of {labels} has no record"
        found.append((name, [runrecords.load(p) for p in paths], body.splitlines()))
    return found


def test_each_kept_table_is_its_runs_records_written_again() -> None:
    found = blocks(STORY.read_text(encoding="utf-8"))
    assert {name for name, _, _ in found} >= {"through-the-incident"}, "a table lost its markers"
    for name, kept, lines in found:
        assert all(r.source == runrecords.RECORDED for r in kept), f"{name}: a transcribed run"
        expected = table(kept)
        assert lines == expected, f"{name}:\n" + "\n".join(expected)


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
    assert table([other]) != table([record])

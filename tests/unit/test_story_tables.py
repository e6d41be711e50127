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
#: A figure's number, without its unit: `1.4` of `1.4 ms`, `9,822` of `9,822`.
NUMBER = re.compile(r"-?[\d.,]*\d")
HEADER = (
    "| target | held | goodput/s during | visits served during | time to recover | attempts/visit |",
    "|---|---|---|---|---|---|",
)


def spread(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """The median, and the range where the repeats differ: `72% (49-82)`."""
    middle = fmt(statistics.median(values))
    low, high = (NUMBER.match(fmt(v))[0] for v in (min(values), max(values)))  # type: ignore[index]
    return middle if low == high else f"{middle} ({low}-{high})"


def recovered(found: Sequence[TargetRecord], after_s: float) -> str:
    """Time to recover over the repeats that did, and how many did not within the run."""
    times = [t.recovery_s for t in found if t.recovery_s is not None]
    text = spread(times, lambda x: f"{x:.0f} s") if times else ""
    missing = len(found) - len(times)
    if not missing:
        return text
    out = f"not within {after_s:.0f} s in {missing} of {len(found)}"
    return f"{text}; {out}" if text else out


def setting_words(record: runrecords.RunRecord) -> str:
    """The story's settings a run changed, as its row names them: `max_attempts 1`."""
    return ", ".join(f"{name} {value}" for name, value in sorted(record.settings.items()))


def table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """The table as the page gives it: a row per target, in the records' order; where the runs'
    settings differ, a row per target and settings, named by the settings it changed."""
    rows_of = list(dict.fromkeys((t.name, setting_words(r)) for r in kept for t in r.targets))
    apart = len({setting_words(r) for r in kept}) > 1
    (after_s,) = {r.story_settings().after_s for r in kept}
    rows = list(HEADER)
    for target, words in rows_of:
        found = [
            t
            for r in kept
            for t in r.targets
            if (t.name, setting_words(r)) == (target, words) and t.valid is True
        ]
        name = f"{target} ({words})" if apart and words else target
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


def _joined(values: Sequence[float | None], fmt: Callable[[float], str]) -> str:
    """One figure per step, in the steps' order: `19.6 / 38.8 / 58.6`."""
    return " / ".join("-" if v is None else fmt(v) for v in values)


def sweep_table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """A sweep of offered load as the page gives it: a row per target, a figure per rate."""
    steps = [s for r in kept for s in r.sweep]
    rows = [
        "| target | offered/s | goodput/s | attempts/s | timeouts | visits served | user p99 | valid |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(s.target for s in steps):
        mine = [s for s in steps if s.target == name]
        valid = sum(s.valid is True for s in mine)
        rows.append(
            f"| {name} | {_joined([s.rate for s in mine], lambda x: f'{x:g}')} "
            f"| {_joined([s.goodput_per_s for s in mine], lambda x: f'{x:.1f}')} "
            f"| {_joined([s.attempts_per_s for s in mine], lambda x: f'{x:.1f}')} "
            f"| {_joined([s.timeouts for s in mine], lambda x: f'{x:,.0f}')} "
            f"| {_joined([s.visits_served for s in mine], lambda x: f'{100 * x:.0f}%')} "
            f"| {_joined([s.latency_p99_s for s in mine], lambda x: f'{x:.2f} s')} "
            f"| {valid} of {len(mine)} |"
        )
    return rows


def closed_loop_table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """The incident under ab: its requests a second in each phase, its longest answer."""
    rows = [
        "| target | ab -c | requests/s before → during → after | longest | failed, non-2xx |",
        "|---|---|---|---|---|",
    ]
    for c in (c for r in kept for c in r.closed_loop):
        phases = " → ".join(
            "-" if v is None else f"{v:.1f}"
            for v in (c.per_s_before, c.per_s_during, c.per_s_after)
        )
        longest = "-" if c.latency_max_s is None else f"{c.latency_max_s:.2f} s"
        rows.append(
            f"| {c.target} | {c.concurrency} | {phases} | {longest} | {c.failed}, {c.non_2xx} |"
        )
    return rows


def cross_check_table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """The generator against oha on the same constant load."""
    rows = [
        "| target | offered/s | goodput/s: generator, oha | p50: generator, oha | "
        "p99: generator, oha | within the tolerance |",
        "|---|---|---|---|---|---|",
    ]

    def pair(a: float | None, b: float | None, fmt: Callable[[float], str]) -> str:
        return ", ".join("-" if v is None else fmt(v) for v in (a, b))

    def ms(x: float) -> str:
        return f"{1000 * x:.0f} ms"

    for c in (c for r in kept for c in r.crosschecks):
        agree = {True: "yes", False: "**no**", None: "not measured"}[c.agree]
        rows.append(
            f"| {c.target} | {c.rate:g} "
            f"| {pair(c.openloop_goodput_per_s, c.oha_goodput_per_s, lambda x: f'{x:.1f}')} "
            f"| {pair(c.openloop_p50_s, c.oha_p50_s, ms)} "
            f"| {pair(c.openloop_p99_s, c.oha_p99_s, ms)} | {agree} |"
        )
    return rows


def _figure(values: Sequence[float | None], fmt: Callable[[float], str]) -> str:
    """The median and range of the known values, or a dash where none is known."""
    known = [v for v in values if v is not None]
    return spread(known, fmt) if known else "-"


def _count(x: float) -> str:
    return f"{x:,.0f}"


def _ms(x: float) -> str:
    return f"{1000 * x:.1f} ms"


def footprint_table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """What serving cost each target beside the users' figures, a row per target: the median
    over its trusted repeats, with the range where they differ."""
    rows = [
        "| target | 499s | calls for nobody, of calls | threads before → peak | peak memory "
        "| send lag p99 | send lag max |",
        "|---|---|---|---|---|---|---|",
    ]
    found = [t for r in kept for t in r.targets if t.valid is True and t.footprint]
    for name in dict.fromkeys(t.name for t in found):
        mine = [t for t in found if t.name == name]
        f = [t.footprint for t in mine if t.footprint]
        rows.append(
            f"| {name} | {_figure([x.nginx_499 for x in f], _count)} "
            f"| {_figure([x.calls_for_nobody for x in f], _count)} of "
            f"{_figure([x.upstream_calls for x in f], _count)} "
            f"| {_figure([x.threads_before for x in f], _count)} → "
            f"{_figure([x.threads_peak for x in f], _count)} "
            f"| {_figure([x.memory_peak_mb for x in f], lambda x: f'{x:.0f} MB')} "
            f"| {_figure([t.send_lag_p99_s for t in mine], _ms)} "
            f"| {_figure([t.send_lag_max_s for t in mine], _ms)} |"
        )
    return rows


def lag_table(kept: Sequence[runrecords.RunRecord]) -> list[str]:
    """The generator's schedule, a row per measurement: its send lag and how many tries it
    took, beside the share of the visits served during the incident."""
    rows = [
        "| run | target | repeat | send lag p99 | send lag max | tries | visits served during |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in kept:
        for t in r.targets:
            lag = ["-" if v is None else _ms(v) for v in (t.send_lag_p99_s, t.send_lag_max_s)]
            tries = "-" if t.tries is None else f"{t.tries} ({'valid' if t.valid else 'invalid'})"
            served = (
                "-" if t.visits_served_during is None else f"{100 * t.visits_served_during:.0f}%"
            )
            rows.append(
                f"| {r.run_id} | {t.name} | {t.repeat} | {lag[0]} | {lag[1]} | {tries} | {served} |"
            )
    return rows


#: The kinds of kept table, by the first word of the block's name; the rest are incident tables.
TABLES: dict[str, Callable[[Sequence[runrecords.RunRecord]], list[str]]] = {
    "sweep": sweep_table,
    "closed": closed_loop_table,
    "cross": cross_check_table,
    "footprint": footprint_table,
    "lag": lag_table,
}


def table_for(name: str, kept: Sequence[runrecords.RunRecord]) -> list[str]:
    return TABLES.get(name.split("-")[0], table)(kept)


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


PAGES = sorted(STORY.parent.glob("*.md"))


def test_each_kept_table_is_its_runs_records_written_again() -> None:
    found = [(page, *b) for page in PAGES for b in blocks(page.read_text(encoding="utf-8"))]
    names = {name for _, name, _, _ in found}
    assert names >= {"through-the-incident", "contenders"}, "a table lost its markers"
    for page, name, kept, lines in found:
        where = f"{page.name}, {name}"
        assert all(r.source == runrecords.RECORDED for r in kept), f"{where}: a transcribed run"
        expected = table_for(name, kept)
        assert lines == expected, f"{where}:\n" + "\n".join(expected)


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


def test_runs_of_other_settings_are_rows_of_their_own() -> None:
    """Two runs of one target, one with users who never reload: two rows, each named by what
    it changed, never one row that mixes their repeats."""
    record = runrecords.load(records.RECORDS_DIR / "20261128-170208-story.json")
    mine = [t for t in record.targets if t.name == "gunicorn-threads"]
    other = replace(record, settings={"max_attempts": 1}, targets=mine)
    lines = table([replace(record, targets=mine), other])
    assert [line.split(" | ")[0] for line in lines[2:]] == [
        "| gunicorn-threads",
        "| gunicorn-threads (max_attempts 1)",
    ]
    assert lines[2].split(" | ")[1:] == lines[3].split(" | ")[1:]


def test_a_sweep_table_is_its_steps_in_order_and_moves_with_them() -> None:
    from playground.incident.steprecords import SweepStepRecord

    def step(target: str, rate: float, goodput: float) -> SweepStepRecord:
        return SweepStepRecord(
            target=target,
            delay_s=2.0,
            rate=rate,
            goodput_per_s=goodput,
            attempts_per_s=rate,
            timeouts=0,
            visits_served=goodput / rate,
            latency_p99_s=2.01,
            valid=True,
        )

    record = runrecords.RunRecord(
        run_id="20261203-000000-story",
        sweep=[step("a", 20.0, 19.6), step("a", 40.0, 38.8), step("b", 20.0, 19.6)],
    )
    lines = table_for("sweep-goodput", [record])
    assert lines[2].startswith("| a | 20 / 40 | 19.6 / 38.8 | 20.0 / 40.0 | 0 / 0 | 98% / 97% |")
    assert lines[3].startswith("| b | 20 | 19.6 |") and lines[3].endswith("| 1 of 1 |")
    fell = replace(record, sweep=[step("a", 20.0, 19.6), step("a", 40.0, 20.0), record.sweep[2]])
    assert table_for("sweep-goodput", [fell]) != lines


def _measured(name: str, repeat: int, *, calls: int, lag_s: float) -> TargetRecord:
    return TargetRecord(
        name=name,
        repeat=repeat,
        visits_served_during=0.5,
        send_lag_p99_s=lag_s,
        send_lag_max_s=2 * lag_s,
        valid=True,
        tries=1,
        footprint=runrecords.Footprint(
            threads_before=51,
            threads_peak=132.0,
            memory_peak_mb=116.2,
            nginx_499=calls + 300,
            upstream_calls=12_113,
            calls_for_nobody=calls,
        ),
    )


def test_a_footprint_table_is_its_repeats_medians_and_moves_with_them() -> None:
    record = runrecords.RunRecord(
        run_id="20261203-000000-story",
        targets=[
            _measured("a", 1, calls=10_044, lag_s=0.0014),
            _measured("a", 2, calls=9_000, lag_s=0.0016),
            _measured("b", 1, calls=0, lag_s=0.0017),
        ],
    )
    lines = table_for("footprint", [record])
    assert lines[2] == (
        "| a | 9,822 (9,300-10,344) | 9,522 (9,000-10,044) of 12,113 | 51 → 132 | 116 MB "
        "| 1.5 ms (1.4-1.6) | 3.0 ms (2.8-3.2) |"
    )
    assert lines[3].startswith("| b | 300 | 0 of 12,113 |")
    fewer = replace(record, targets=[*record.targets[:2], _measured("b", 1, calls=5, lag_s=0.0017)])
    assert table_for("footprint", [fewer]) != lines


def test_a_lag_table_is_a_row_per_measurement_with_its_tries() -> None:
    record = runrecords.RunRecord(
        run_id="20261203-000000-story",
        targets=[
            _measured("a", 1, calls=1, lag_s=0.0044),
            replace(_measured("a", 2, calls=1, lag_s=0.0047), tries=2),
        ],
    )
    lines = table_for("lag", [record])
    assert lines[2:] == [
        "| 20261203-000000-story | a | 1 | 4.4 ms | 8.8 ms | 1 (valid) | 50% |",
        "| 20261203-000000-story | a | 2 | 4.7 ms | 9.4 ms | 2 (valid) | 50% |",
    ]

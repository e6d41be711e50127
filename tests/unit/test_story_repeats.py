"""A target measured several times: how often each verdict came out (k of n with Wilson's
interval), the time to recover with the repeats that did not recover censored (Kaplan-Meier),
and the split between Gunicorn's workers before the incident, on targets whose answer is known."""

from __future__ import annotations

import io
import statistics
from pathlib import Path

import pytest
from rich.console import Console

from playground.commands.storyoutcome import print_outcome
from playground.core.survival import km_median, still_waiting
from playground.incident import analysis
from playground.incident.held import COLLAPSED, HELD, NOT_RECOVERED
from playground.incident.settings import StorySettings
from playground.incident.split import busiest_share, connections_before, split_before
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.incident.targetresults import GeneratorCheck, Incident, StorySecond, StorySummary
from playground.story import findings, headline, repeats, report

AFTER_S = 20.0


def _repeat(
    k: int,
    *,
    served: float,
    recovery_s: float | None,
    valid: bool = True,
    before: list[float] | None = None,
    name: str = "story-gunicorn-threads",
) -> StoryTarget:
    """One measurement of a target with its findings decided, as the runner decides them."""
    t = StoryTarget(
        name=name,
        repeat=k,
        model="threads",
        server="Gunicorn",
        check=GeneratorCheck(valid=valid, reasons=[] if valid else ["send lag p99 17 ms > 10 ms"]),
        summary=StorySummary(
            visits_served_during=served,
            recovery_s=recovery_s,
            goodput_during=60 * served,
            worker_connections_before=before,
        ),
    )
    t.findings = findings.for_target(t)
    return t


def _run(*targets: StoryTarget, repeat: int) -> StoryRun:
    return StoryRun(
        run_id="20261127-010203-story",
        started_at="2026-11-27T01:02:03+0000",
        finished_at="2026-11-27T01:32:03+0000",
        command="playground story --repeat 10",
        story=StorySettings(after_s=AFTER_S),
        repeat=repeat,
        targets=list(targets),
    )


def _ten() -> list[StoryTarget]:
    """3 held, 5 collapsed and recovered, 2 collapsed and did not recover."""
    held = [_repeat(k, served=1.0, recovery_s=0.0) for k in (1, 2, 3)]
    back = [_repeat(k, served=0.5, recovery_s=float(k)) for k in (4, 5, 6, 7, 8)]
    down = [_repeat(k, served=0.3, recovery_s=None) for k in (9, 10)]
    return [*held, *back, *down]


# --- Kaplan-Meier -----------------------------------------------------------------------------
def test_kaplan_meier_matches_a_hand_worked_example_and_counts_the_censored_at_risk():
    # 4 ended; 6 still waiting when watching stopped; 8 and 10 ended; 20 still waiting.
    # At 4: 5 at risk, 1 ends: 4/5 = 0.8 left. At 8: 3 at risk (6 has left the count), 1 ends:
    # 0.8 x 2/3 = 0.533. At 10: 2 at risk, 1 ends: 0.533 x 1/2 = 0.267, the first at most 1/2.
    seen = [(4.0, True), (6.0, False), (8.0, True), (10.0, True), (20.0, False)]
    steps = still_waiting(seen)
    assert [t for t, _ in steps] == [4.0, 8.0, 10.0]
    assert [s for _, s in steps] == pytest.approx([0.8, 0.8 * 2 / 3, 0.8 * 2 / 3 / 2])
    assert km_median(seen) == 10.0
    # Dropping the two that never ended would say 8: the censored move the median.
    assert statistics.median([4, 8, 10]) == 8


def test_the_median_is_where_the_share_falls_to_one_half_and_none_where_it_never_does():
    assert km_median([(2.0, True), (4.0, True), (6.0, True), (8.0, True)]) == 4.0
    assert km_median([(3.0, True), (20.0, False), (20.0, False)]) is None
    assert km_median([]) is None


# --- k of n -----------------------------------------------------------------------------------
def test_seven_collapsed_of_ten_is_said_as_k_of_n_with_its_interval():
    (sp,) = repeats.spreads(_ten(), after_s=AFTER_S)
    assert sp.frequency(COLLAPSED, NOT_RECOVERED).text() == "7 of 10 (40-89 %)"
    assert sp.frequency(HELD).text() == "3 of 10 (11-60 %)"
    assert sp.frequency(COLLAPSED).text() == "5 of 10 (24-76 %)"
    assert sp.frequency(NOT_RECOVERED).text() == "2 of 10 (6-51 %)"
    (split,) = sp.findings
    assert split.code == "verdict-split"
    assert "held in 3 of 10 (11-60 %) trusted repeats and collapsed in 7 of 10 (40-89 %)" in (
        split.message
    )


def test_an_untrusted_repeat_is_left_out_of_n():
    runs = [
        _repeat(1, served=1.0, recovery_s=0.0),
        _repeat(2, served=0.2, recovery_s=None, valid=False),  # its generator fell behind
        _repeat(3, served=1.0, recovery_s=0.0),
    ]
    (sp,) = repeats.spreads(runs, after_s=AFTER_S)
    assert sp.frequency(HELD).text() == "2 of 2 (34-100 %)"
    assert sp.frequency(NOT_RECOVERED).k == 0
    assert sp.recovery is not None and sp.recovery.repeats == 2
    # Held in every trusted repeat: no split, only the repeat left out is said.
    assert [f.code for f in sp.findings] == ["repeats-left-out"]


def test_a_repeat_that_did_not_recover_is_censored_not_dropped():
    runs = [_repeat(k, served=0.5, recovery_s=float(2 * k)) for k in (1, 2, 3, 4)]
    (kept,) = repeats.spreads(runs, after_s=AFTER_S)
    assert kept.recovery is not None and kept.recovery.median_s == 4.0  # 2 4 6 8: S hits 1/2
    (sp,) = repeats.spreads([*runs, _repeat(5, served=0.3, recovery_s=None)], after_s=AFTER_S)
    r = sp.recovery
    assert r is not None
    assert (r.repeats, r.recovered, r.censored_at_s) == (5, 4, AFTER_S)
    # 2 4 6 8 and one over 20 s: 0.8, 0.6, 0.4 after the third, so the median is 6 s.
    assert (r.median_s, r.min_s, r.max_s) == (6.0, 2.0, 8.0)
    # Fewer than half recovered: the median is over the run's after-phase.
    down = [_repeat(k, served=0.3, recovery_s=None) for k in (6, 7, 8, 9)]
    (most,) = repeats.spreads([*runs[:2], *down], after_s=AFTER_S)
    assert most.recovery is not None and most.recovery.median_s is None


# --- the report and the terminal --------------------------------------------------------------
def test_the_report_gives_k_of_n_and_the_censored_median_for_a_repeated_target(tmp_path: Path):
    report.write_report(run_dir=tmp_path, run=_run(*_ten(), repeat=10))
    md = (tmp_path / "report.md").read_text()
    # Recovered in 0 0 0 4 5 6 7 8 s, two over 20 s: 0.7 still down after 0 s, 0.6 after 4 s,
    # 0.5 after 5 s: the median is 5 s.
    assert (
        "| story-gunicorn-threads | 10 of 10 measured | 3 of 10 (11-60 %) | 7 of 10 (40-89 %) "
        "| 5 of 10 (24-76 %) | 2 of 10 (6-51 %) | median 5 s (0 s to over 20 s) |"
    ) in md


def test_the_terminal_says_k_of_n_for_repeats_and_1_of_1_for_a_single_run(tmp_path: Path):
    def printed(run: StoryRun) -> str:
        out = io.StringIO()
        console = Console(file=out, width=400)
        print_outcome(run, results=tmp_path, paths=[], out=console, err=console)
        return out.getvalue()

    many = printed(_run(*_ten(), repeat=10))
    assert (
        "story-gunicorn-threads: held 3 of 10 (11-60 %), collapsed and recovered within the "
        "run 5 of 10 (24-76 %), collapsed and did not recover 2 of 10 (6-51 %); time to "
        "recover median 5 s (0 s to over 20 s)"
    ) in many
    once = printed(_run(_repeat(1, served=0.3, recovery_s=None), repeat=1))
    assert "story-gunicorn-threads: collapsed, 1 of 1 (21-100 %)" in once


def test_a_single_untrusted_run_says_no_odds():
    t = _repeat(1, served=1.0, recovery_s=0.0, valid=False)
    (row,) = headline.headline_rows(_run(t, repeat=1), [t])
    assert row["verdict"] == "held (INVALID run: not a headline)"


# --- the split between the workers before the incident ----------------------------------------
def test_the_split_before_is_read_from_second_3_to_the_incidents_start():
    rows = [[50, 0], [50, 0], [50, 0], [30, 10], [30, 10], [0, 99], [0, 99]]
    assert split_before(rows, incident_start=5.0) == [30.0, 10.0]
    assert busiest_share([30.0, 10.0]) == 0.75
    assert busiest_share([12.0]) is None and busiest_share([0.0, 0.0]) is None
    # The summary keeps it, by the same rule.
    seconds = [StorySecond(t=i, worker_connections=r) for i, r in enumerate(rows)]
    s = analysis.summarise(
        attempts=[],
        rows=seconds,
        incident=Incident(start=5.0, seconds=2.0),
        arrivals_end=7.0,
        timeout=4.0,
    )
    assert s.worker_connections_before == [30.0, 10.0]


def test_the_busiest_share_is_read_per_repeat_from_a_stored_run_old_or_new(tmp_path: Path):
    new = [
        _repeat(1, served=1.0, recovery_s=0.0, before=[30.0, 10.0]),
        _repeat(2, served=0.5, recovery_s=3.0, before=[20.0, 20.0]),
    ]
    old = _repeat(3, served=0.5, recovery_s=3.0)  # recorded before the summary kept it
    old.incident = Incident(start=5.0, seconds=2.0)
    old.seconds = [StorySecond(t=i, worker_connections=[36, 4]) for i in range(7)]
    gevent = _repeat(1, served=1.0, recovery_s=0.0, name="story-gunicorn-gevent")
    run = StoryRun.from_json(_run(*new, old, gevent, repeat=3).to_json())
    shares = [(t.name, t.repeat, busiest_share(connections_before(t))) for t in run.targets]
    assert shares == [
        ("story-gunicorn-threads", 1, 0.75),
        ("story-gunicorn-threads", 2, 0.5),
        ("story-gunicorn-threads", 3, 0.9),
        ("story-gunicorn-gevent", 1, None),
    ]
    report.write_report(run_dir=tmp_path, run=run)
    md = (tmp_path / "report.md").read_text()
    assert "| story-gunicorn-threads \\#1 | - | 30 / 10 (75%) |" in md
    assert "| story-gunicorn-threads \\#3 | - | 36 / 4 (90%) |" in md


def test_a_target_settles_once_its_interval_lies_wholly_on_one_side_of_a_half():
    held = [_repeat(k, served=1.0, recovery_s=0.0) for k in range(1, 7)]
    # 4 of 4 held: Wilson's interval of 0 collapses in 4 is 0-49 %, wholly below a half
    assert repeats.settled(held[:4], minimum=4) == repeats.Frequency(0, 4)
    assert repeats.settled(held[:3], minimum=4) is None  # below the minimum
    assert repeats.settled(held[:3], minimum=3) is None  # 0 of 3: 0-56 %, a half inside
    lost = [_repeat(k, served=0.4, recovery_s=None) for k in range(1, 6)]
    assert repeats.settled(lost, minimum=4) == repeats.Frequency(5, 5)
    split = held[:3] + lost[:3]
    assert repeats.settled(split, minimum=2) is None  # 3 of 6 straddles a half
    # a repeat whose generator fell behind counts neither way: 3 held and 1 untrusted
    untrusted = [*held[:3], _repeat(4, served=0.1, recovery_s=None, valid=False)]
    assert repeats.settled(untrusted, minimum=4) is None


def test_a_settled_target_stops_repeating_and_the_run_says_why(monkeypatch, tmp_path):
    from playground.core.runstore import RunStore
    from playground.core.scenarios import resolve_story
    from playground.story import run as story_run

    outcomes = {"story-gunicorn-gevent": 1.0, "story-gunicorn-threads": 0.5}

    def measure(story, target, repeat, incident, closed_loop):
        t = _repeat(repeat, served=outcomes[target.name], recovery_s=0.0, name=target.name)
        story.run.targets.append(t)

    monkeypatch.setattr(story_run, "_measure", measure)
    monkeypatch.setattr(story_run, "as_run", lambda base, settings: base)
    run = _run(repeat=10)
    run.settle = 4
    said: list[str] = []
    story = story_run.RunInProgress(
        run=run,
        store=RunStore.create_run(results_dir=tmp_path, run=run),
        docker=None,  # type: ignore[arg-type]
        info=said.append,
        warn=said.append,
    )
    story_run.run_story(story, resolve_story(["gunicorn-gevent", "gunicorn-threads"]))
    counts = {n: sum(t.name == n for t in run.targets) for n in outcomes}
    # gevent held 4 of 4 and stopped; the pool that served half its visits collapsed in 4 of 4
    assert counts == {"story-gunicorn-gevent": 4, "story-gunicorn-threads": 4}
    assert [(s.name, s.repeats, s.collapsed, s.trusted) for s in run.settled] == [
        ("story-gunicorn-gevent", 4, 0, 4),
        ("story-gunicorn-threads", 4, 4, 4),
    ]
    assert any("wholly below a half after 4 of at most 10" in line for line in said)

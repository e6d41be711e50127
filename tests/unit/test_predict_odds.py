"""The model's predictions as odds: draws that vary the busiest share, probabilities with
Wilson's interval, the share where P(held) crosses 1/2, the map, --json, and bad input."""

from __future__ import annotations

import json
import random

import pytest

from playground.cli import main
from playground.core.scenarios import resolve_story
from playground.incident import held
from playground.incident.oddsresults import Draw, Odds
from playground.incident.settings import StorySettings
from playground.predict import draws, measured, oddsmap

#: Short phases that keep gthread's verdict at 2 s: an even split holds, 0.75 collapses.
SHORT = StorySettings(before_s=5, incident_s=15, after_s=5)
SHORT_FLAGS = ["--before", "5", "--incident", "15", "--after", "5"]


@pytest.fixture(scope="module")
def gthread():
    (target,) = resolve_story(["gunicorn-threads"])
    return target


def test_each_draw_takes_its_own_share_and_system_seed_with_the_same_arrivals(gthread):
    first, second = (draws.draw_settings(gthread, SHORT, i) for i in (0, 1))
    assert first.busiest_share != second.busiest_share
    assert first.system_seed != second.system_seed and first.seed == second.seed == SHORT.seed
    low, high = min(measured.shares()), max(measured.shares())
    drawn = [draws.draw_settings(gthread, SHORT, i).busiest_share for i in range(200)]
    assert all(s is not None and 0.5 <= s <= 1 for s in drawn)
    # Centred on the measured shares, not on one constant.
    inside = sum(low - 0.05 <= s <= high + 0.05 for s in drawn if s is not None)
    assert inside > 150 and len({round(s or 0, 3) for s in drawn}) > 100
    pinned = draws.draw_settings(gthread, StorySettings(busiest_share=0.6), 3)
    assert pinned.busiest_share == 0.6


def test_the_system_seed_seeds_the_servers_and_not_the_arrivals(gthread):
    from playground.predict.run import simulate
    from playground.predict.simulate import Simulation
    from playground.predict.system import system_for

    short = StorySettings(before_s=2, incident_s=2, after_s=1, busiest_share=0.6)
    other = StorySettings(before_s=2, incident_s=2, after_s=1, busiest_share=0.6, system_seed=9)
    a, b = simulate(gthread, short), simulate(gthread, other)
    assert sorted(x.intended for x in a.attempts if x.attempt == 1) == sorted(
        x.intended for x in b.attempts if x.attempt == 1
    )

    def first_pick(s: StorySettings) -> float:
        sim = Simulation(system_for(gthread, s), s, delay=0.7, incident=True)
        return sim.server.rng.random()

    assert first_pick(short) != first_pick(other)
    assert first_pick(short) == first_pick(StorySettings(busiest_share=0.6, system_seed=1))


def test_an_even_split_holds_where_075_collapses_and_the_threshold_lies_between(gthread):
    assert draws.p_held(gthread, SHORT, share=0.5, draws=6) >= 5 / 6
    assert draws.p_held(gthread, SHORT, share=0.75, draws=6) <= 1 / 6
    share, below = draws.threshold_share(gthread, SHORT, workers=2, draws=4)
    assert below is None and share is not None and 0.5 < share < 0.75


def test_the_probabilities_count_the_draws_and_censor_the_unrecovered():
    odds = Odds(
        draws=[
            Draw(visits_served_during=1.0, recovery_s=0.0, outcome=held.HELD),
            Draw(visits_served_during=0.8, recovery_s=20.0, outcome=held.COLLAPSED),
            Draw(visits_served_during=0.7, recovery_s=None, outcome=held.NOT_RECOVERED),
            Draw(visits_served_during=0.6, recovery_s=None, outcome=held.NOT_RECOVERED),
        ]
    )
    assert odds.frequency(held.NOT_RECOVERED).text() == "2 of 4 (15-85 %)"
    assert odds.frequency(held.HELD).k == 1
    assert odds.recovery_quantile(0.5) == 20.0
    assert odds.recovery_quantile(0.9) is None  # past the run's end, not its last second
    # Not recovered (the most frequent), the lower median of its 0.7 and 0.6 served.
    assert draws._representative(odds.draws) == 3


def test_the_map_is_zero_far_below_capacity_and_one_far_above(gthread, tmp_path):
    m = oddsmap.predict_map(
        gthread,
        SHORT,
        rates=[15.0, 200.0],
        delays=[2.0],
        draws=3,
        results_dir=tmp_path,
    )
    low, high = m.cells
    assert (low.collapsed, high.collapsed) == (0, 3) and low.simulated and high.simulated
    assert m.after_s == SHORT.after_s  # shorter than every visit's bound: kept
    # 3 attempts of 4 s and 2 reloads of 1 s: the story's 40 s after the incident cut to 14.
    assert draws.collapse_settings(StorySettings()).after_s == 14.0
    assert m.measured == []


def test_a_row_fills_past_a_cell_that_always_collapsed(gthread):
    cells = oddsmap._row(
        gthread,
        StorySettings(before_s=5, incident_s=15, after_s=5, incident_delay=2.0),
        [120.0, 240.0, 480.0],
        draws=2,
        pool=128,
    )
    assert [c.collapsed for c in cells] == [2, 2, 2]
    assert [c.simulated for c in cells] == [True, False, False]


def test_the_map_marks_measured_runs_with_the_same_settings(tmp_path):
    from playground.core import environment, runstore
    from playground.incident.storyresults import StoryRun, StoryTarget
    from playground.incident.targetresults import StorySummary

    def stored(rate: float, served: float, **changes: object) -> None:
        story = StorySettings(rate=rate, **changes)  # type: ignore[arg-type]
        run = StoryRun(
            run_id=runstore.new_run_id() + f"-{rate:g}-{served:g}-{len(changes)}",
            started_at="2026-01-01T00:00:00",
            environment=environment.model_only(),
            story=story,
            targets=[
                StoryTarget(
                    name="story-gunicorn-threads",
                    summary=StorySummary(visits_served_during=served),
                )
            ],
        )
        store = runstore.RunStore.create_run(results_dir=tmp_path, run=run)
        store.save_run(run)

    stored(60.0, 0.5)
    stored(60.0, 1.0)
    stored(60.0, 0.5, timeout=9.0)  # other settings: not on the map
    none = tmp_path / "no-records"
    (point,) = oddsmap.measured_points(
        tmp_path, "story-gunicorn-threads", StorySettings(), records_dir=none
    )
    assert (point.rate, point.delay, point.collapsed, point.runs) == (60.0, 2.0, 1, 2)


def test_the_map_marks_the_committed_records_each_run_once(tmp_path):
    """The runs the pages cite are points too (docs/runs/), a Swarm stack's left out; a run
    both kept under results/ and recorded counts once."""
    from playground.core.records import dumps
    from playground.incident.runrecords import RunRecord, TargetRecord

    def record(run_id: str, verdicts: list[str], **settings: object) -> None:
        rows = [
            TargetRecord(name="gunicorn-threads", repeat=i + 1, verdict=v, valid=True)
            for i, v in enumerate(verdicts)
        ]
        kept = RunRecord(run_id=run_id, kind="story", settings=dict(settings), targets=rows)
        (tmp_path / f"{run_id}.json").write_text(dumps(kept))

    record("20260101-000000-story", ["held", "collapsed", "collapsed and did not recover"])
    record("20260101-000001-story", ["collapsed"], incident_delay=2.5)
    record("20260101-000002-story", ["held"], timeout=9.0)  # other settings: not on the map
    record("20260101-000003-swarm", ["held", "held"])  # the stack: not the compose path
    points = oddsmap.measured_points(
        tmp_path / "results", "story-gunicorn-threads", StorySettings(), records_dir=tmp_path
    )
    assert [(p.rate, p.delay, p.collapsed, p.runs) for p in points] == [
        (60.0, 2.0, 2, 3),
        (60.0, 2.5, 1, 1),
    ]
    assert points[0].run_ids == ["20260101-000000-story"]


def test_json_parses_and_holds_the_probabilities(tmp_path, capsys):
    argv = ["predict", "--results-dir", str(tmp_path), "--json", "--draws", "2", *SHORT_FLAGS]
    assert main([*argv, "uwsgi-threads"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (target,) = doc["targets"]
    assert target["name"] == "story-uwsgi-threads"
    assert sum(p["k"] for p in target["probabilities"].values()) == 2
    assert len(target["odds"]["draws"]) == 2


def test_the_terminal_output_fits_80_columns(tmp_path, capsys):
    from playground.commands.predict import odds_lines

    odds = Odds(
        draws=[Draw(share=0.6, visits_served_during=1.0, recovery_s=0.0, outcome="held")] * 96,
        threshold_share=0.62,
        threshold_draws=12,
        measured_shares=measured.shares(),
    )
    lines = odds_lines("story-gunicorn-threads+gunicorn-bounded-queue", odds)
    assert "holds while the busiest worker's share stays below 0.62" in "\n".join(lines)
    assert max(len(line) for line in lines) <= 80


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--map", "--map-cells", "0", "gunicorn-threads"], "at least one cell"),
        (["--map", "--map-rates=-5:10", "gunicorn-threads"], "--map-rates must run from above 0"),
        (["--map", "--map-delays", "x", "gunicorn-threads"], "--map-delays takes LO:HI"),
        (["--map"], "name one target"),
        (["--rate", "-5", "--map", "gunicorn-threads"], "rate must be above 0"),
        (["nope"], "unknown story target 'nope'"),
        (["--draws", "0", "uwsgi-threads"], "--draws must be at least 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    assert main(["predict", "--results-dir", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_a_share_drawn_stays_between_an_even_split_and_all():
    rng = random.Random(0)
    assert all(0.25 <= measured.draw_share(rng, workers=4) <= 1 for _ in range(500))

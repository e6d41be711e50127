"""The model's predictions as odds: draws that vary the busiest share, probabilities with
Wilson's interval, the share the answer turns on (read from the draws), the map, --json, and bad input."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from playground.cli import main
from playground.core.scenarios import resolve_story
from playground.incident import held
from playground.incident.oddsresults import Draw, Odds
from playground.incident.settings import StorySettings
from playground.predict import draws, measured, oddsmap
from playground.predict.run import predict_target

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
    assert inside > 150 and len({round(s or 0, 4) for s in drawn}) > 100
    pinned = draws.draw_settings(gthread, StorySettings(busiest_share=0.6), 3)
    assert pinned.busiest_share == 0.6


def test_behind_haproxy_the_draws_take_haproxys_measured_split_not_nginxs(gthread):
    """What connects to the workers moves the split: HAProxy's fit repeats, not nginx's."""
    (behind,) = resolve_story(["gunicorn-threads+haproxy"])
    nginx, haproxy = measured.shares("nginx"), measured.shares("haproxy")
    assert max(haproxy) < min(nginx)  # the two fronts' measured splits do not overlap
    drawn = [draws.draw_settings(behind, SHORT, i).busiest_share or 0 for i in range(200)]
    mid = (max(haproxy) + min(nginx)) / 2
    assert sum(s < mid for s in drawn) > 180
    direct = [draws.draw_settings(gthread, SHORT, i).busiest_share or 0 for i in range(200)]
    assert sum(s > mid for s in direct) > 180


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


def test_an_even_split_holds_where_075_collapses(gthread):
    def collapses(share: float) -> int:
        pinned = replace(SHORT, busiest_share=share)
        return sum(draws.collapsed(gthread, pinned, i) for i in range(6))

    assert collapses(0.5) <= 1
    assert collapses(0.75) >= 5


def test_a_draws_verdict_figures_are_the_full_runs(gthread):
    """A draw keeps only its verdict's figures, counted without the per-second rows: the same
    as the full run's summary gives, held and collapsed draws alike."""
    outcomes = set()
    for i, share in enumerate((0.5, 0.75, 0.5, 0.75)):
        pinned = replace(SHORT, busiest_share=share)
        draw = draws.one_draw(gthread, pinned, i)
        full = predict_target(gthread, draws.draw_settings(gthread, pinned, i)).summary
        assert full is not None
        assert (draw.visits_served_during, draw.recovery_s) == (
            full.visits_served_during,
            full.recovery_s,
        )
        outcomes.add(draw.outcome)
    assert len(outcomes) > 1, outcomes


def _draws(*pairs: tuple[float, str]) -> list[Draw]:
    return [Draw(share=share, outcome=outcome) for share, outcome in pairs]


def test_the_share_the_answer_turns_on_is_read_from_the_draws():
    low = [(0.5 + i / 1000, held.HELD) for i in range(20)]
    high = [(0.6 + i / 1000, held.NOT_RECOVERED) for i in range(20)]
    # Held below 0.52, not above 0.6: the cut lies between them.
    threshold = draws.share_threshold(_draws(*low, *high))
    assert threshold is not None and 0.519 < threshold < 0.6
    # One draw on the wrong side moves nothing but the counts.
    assert draws.share_threshold(_draws(*low, *high, (0.55, held.COLLAPSED))) is not None
    # The other way round (holding above, not below) is not a threshold of this kind.
    swapped = [(s, held.HELD) for s, _ in high] + [(s, held.COLLAPSED) for s, _ in low]
    assert draws.share_threshold(_draws(*swapped)) is None
    # Held everywhere, or half and half whatever the share: no share splits them.
    assert draws.share_threshold(_draws(*[(s, held.HELD) for s, _ in low + high])) is None
    alternating = [(0.5 + i / 100, held.HELD if i % 2 else held.COLLAPSED) for i in range(40)]
    assert draws.share_threshold(_draws(*alternating)) is None
    # Too few draws to tell the sides apart by their intervals.
    assert draws.share_threshold(_draws((0.5, held.HELD), (0.7, held.COLLAPSED))) is None


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

    def record(run_id: str, verdicts: list[str], kind: str = "story", **settings: object) -> None:
        rows = [
            TargetRecord(name="gunicorn-threads", repeat=i + 1, verdict=v, valid=True)
            for i, v in enumerate(verdicts)
        ]
        kept = RunRecord(run_id=run_id, kind=kind, settings=dict(settings), targets=rows)
        (tmp_path / f"{run_id}.json").write_text(dumps(kept))

    record("20260101-000000-story", ["held", "collapsed", "collapsed and did not recover"])
    record("20260101-000001-story", ["collapsed"], incident_delay=2.5)
    record("20260101-000002-story", ["held"], timeout=9.0)  # other settings: not on the map
    record("20260101-000003-swarm", ["held", "held"])  # the stack: not the compose path
    record("20260101-000004-run", ["held"], kind="swarm")  # by its kind, whatever its id
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
    from playground.predict.oddstext import odds_lines

    odds = Odds(
        draws=[Draw(share=0.6, visits_served_during=1.0, recovery_s=0.0, outcome="held")] * 48
        + [Draw(share=0.7, visits_served_during=0.5, recovery_s=None, outcome=held.NOT_RECOVERED)]
        * 48,
        threshold_share=0.62,
        measured_shares=measured.shares(),
    )
    lines = odds_lines("story-gunicorn-threads+gunicorn-bounded-queue", odds)
    assert lines[0] == "story-gunicorn-threads+gunicorn-bounded-queue: P(collapse) 0.50"
    assert "48 of 96 draws; the draws' 95 % interval" in lines[1]
    assert "holds while the busiest worker's share stays below 0.62" in "\n".join(lines)
    assert max(len(line) for line in lines) <= 80
    # the share's rule only where the measured repeats back it
    quiet = odds_lines("story-gunicorn-threads", odds, share_rule=False)
    assert "holds while" not in "\n".join(quiet)


def test_the_whole_text_of_a_real_prediction_fits_80_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # results/ as a reader's run writes it, not a long temporary path
    argv = ["predict", "--results-dir", "results", "--draws", "2", *SHORT_FLAGS]
    assert main([*argv, "gunicorn-threads", "uwsgi-threads+haproxy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("story-gunicorn-threads: P(collapse) ")
    assert any(line.startswith("story-uwsgi-threads+haproxy: P(collapse) ") for line in lines)
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)


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
        (["--shares-from", "nope", "gunicorn-threads"], "no run 'nope'"),
        (["--shares-from", "20261128-142802-story", "gunicorn-threads"], "trusted repeats"),
        (
            [
                "--shares-from",
                "20261205-030154-story",
                "--busiest-share",
                "0.7",
                "gunicorn-threads",
            ],
            "give one",
        ),
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


def test_a_maps_default_delays_centre_on_the_tipping_delay_or_the_timeout_if_shorter():
    settings = StorySettings(rate=60, timeout=4.0)
    # 128 threads tip at 128 / 60 = 2.13 s, short of the users' 4 s.
    _, (low, high) = oddsmap.default_ranges(128, settings)
    assert (low, high) == pytest.approx((0.5 * 128 / 60, 1.5 * 128 / 60))
    # 2 x 1000 greenlets tip at 33 s, where no attempt is answered within 4 s anyway.
    _, (low, high) = oddsmap.default_ranges(2000, settings)
    assert (low, high) == pytest.approx((2.0, 6.0))


@pytest.mark.parametrize("sweep", ["rate", "delay"])
def test_json_is_the_document_alone_for_a_sweep_too(sweep, tmp_path, capsys):
    """A script reads stdout as one JSON document, whatever the prediction's kind."""
    argv = ["predict", "--results-dir", str(tmp_path), "--json", "--sweep", sweep, *SHORT_FLAGS]
    assert main([*argv, "uwsgi-threads", "--jobs", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"].endswith("-predict")

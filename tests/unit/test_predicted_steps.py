"""The model beside each step of a story run's sweep and cliff: the same settings, arrivals,
seed and windows as measured, the step's own length simulated, a disagreement marked and a
target the model does not cover said so in one row."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from playground.cli import main
from playground.core.scenarios import resolve_story
from playground.incident import analysis
from playground.incident.settings import StorySettings, SweepSettings
from playground.incident.storyresults import (
    Cliff,
    CliffTarget,
    DelayStep,
    StoryRun,
    Sweep,
    SweepStep,
    SweepTarget,
)
from playground.predict import beside
from playground.predict import run as model
from playground.report.document import render_markdown
from playground.story.report import document
from playground.story.sweep import summarise_step

DATA = Path(__file__).resolve().parents[1] / "data"

# The recorded step's generator settings (openloop_sweep_step_pool8_16rps.json): uwsgi-threads
# with 2 x 4 threads, the third party at 1 s, 16 visits/s (Poisson, seed 1) for 3 + 8 s, users
# who give up after 2.5 s and reload after 0.5 s, up to 3 attempts.
SETTINGS = StorySettings(
    workers=2,
    threads=4,
    rate=16,
    normal_delay=0.3,
    incident_delay=1.0,
    timeout=2.5,
    refresh_delay=0.5,
    max_attempts=3,
    seed=1,
)
WINDOWS = SweepSettings(rates=[16], delay=1.0, warmup_s=3, measure_s=8)


def recorded_step() -> SweepStep:
    output = analysis.generator_output(
        json.loads((DATA / "openloop_sweep_step_pool8_16rps.json").read_text())
    )
    return summarise_step(
        attempts=output.attempts, check=output.check, rate=16, warmup_s=3, measure_s=8
    )


def sweep_run(*names: str) -> StoryRun:
    """A measured run whose sweep holds the recorded step, once per target named."""
    step = recorded_step()
    targets = [SweepTarget(name=n, model="threads", steps=[step]) for n in names]
    return StoryRun(
        run_id="measured", story=SETTINGS, sweep=Sweep(settings=WINDOWS, targets=targets)
    )


def markdown(run: StoryRun) -> str:
    return render_markdown(document(run, {}, None))


def row(md: str, *starts: str) -> list[str]:
    """The table rows whose first cells are `starts` (the last one may be the cell's start)."""
    return [line for line in md.splitlines() if line.startswith("| " + " | ".join(starts))]


def pair(md: str, *starts: str, measured: str, predicted: str) -> list[str]:
    """The measured rows whose first cells are `starts` and whose verdict is `measured`, where
    the model's row beneath gives a verdict starting with `predicted` (one quantity per cell:
    two rows per step)."""
    lines = md.splitlines()

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    n = len(starts)
    return [
        line
        for line, below in pairwise(lines)
        if line.startswith("|")
        and cells(line)[: n + 2] == [*starts, "measured", measured]
        and cells(below)[: n + 1] == [*([""] * n), "predicted"]
        and cells(below)[n + 1].startswith(predicted)
    ]


def test_a_recorded_sweep_step_gets_the_models_figures_made_as_a_predicted_step():
    """The pool at twice its capacity fell when measured and falls in the model: the row shows
    both and agrees; the figures are the model's own rate step with the run's arrivals, seed
    and windows."""
    run = sweep_run("story-uwsgi-threads")
    assert run.missing_prediction()
    beside.attach(run)
    assert not run.missing_prediction()
    assert run.sweep is not None
    (step,) = run.sweep.targets[0].steps
    p = step.predicted
    assert p is not None and p.error is None
    assert p.verdict == "fell" and p.differs == []
    (target,) = resolve_story(["uwsgi-threads"])
    own = model.rate_step(
        target, SETTINGS, 16, delay=1.0, warmup_s=3, measure_s=8, arrival="poisson"
    )
    assert (p.goodput_during, p.visits_served_during) == (own.goodput_per_s, own.visits_served)
    assert p.amplification == own.attempts_per_s / own.offered_per_s  # its arrivals: Poisson
    seeded = model.rate_step(
        target, replace(SETTINGS, seed=2), 16, delay=1.0, warmup_s=3, measure_s=8, arrival="poisson"
    )
    assert seeded.attempts_per_s != own.attempts_per_s  # the seed is read: it is the run's
    md = markdown(run)
    (line,) = pair(md, "story-uwsgi-threads", "16", measured="fell", predicted="fell")
    assert line.endswith("| yes |")
    assert "In the model: story-uwsgi-threads fell at 16/s" in md


def test_a_step_the_model_disagrees_with_is_marked():
    """The same measured step beside gevent's prediction (1000 greenlets hold 16/s at 1 s):
    the verdicts differ and the visits served are 100 points apart."""
    run = sweep_run("story-uwsgi-threads", "story-gunicorn-gevent")
    beside.attach(run)
    md = markdown(run)
    (line,) = pair(md, "story-gunicorn-gevent", "16", measured="fell", predicted="held")
    assert "**NO**: verdict: predicted held, measured fell" in line.replace("\\*", "*")
    assert "visits served: predicted 100%, measured 0%" in line
    (agrees,) = pair(md, "story-uwsgi-threads", "16", measured="fell", predicted="fell")
    assert "NO" not in agrees


def test_a_target_the_model_does_not_cover_says_so_in_one_row():
    run = sweep_run("story-granian")
    assert run.sweep is not None
    run.sweep.targets[0].steps.append(replace(recorded_step(), rate=20))
    beside.attach(run)
    assert all(st.predicted and st.predicted.error for st in run.sweep.targets[0].steps)
    lines = [line for line in markdown(run).splitlines() if "not modelled" in line]
    assert len(lines) == 1
    assert lines[0].startswith("| story-granian | - |")
    assert "the model covers uWSGI's and Gunicorn's thread pools and gevent" in lines[0]


def _cliff_run() -> StoryRun:
    held = DelayStep(
        held=True, recovered=True, recovery_s=0.0, visits_served_during=1.0, trusted=True
    )
    rate = SweepStep(rate=16, offered_per_s=16, goodput_per_s=16, visits_served=1.0)
    return StoryRun(
        run_id="measured",
        story=SETTINGS,
        cliff=Cliff(
            delay=1.0,
            delays=[0.4, 1.0, 1.2],
            targets=[
                CliffTarget(
                    name="story-uwsgi-threads",
                    rates=SweepTarget(name="story-uwsgi-threads", model="threads", steps=[rate]),
                    delays=[
                        replace(held, incident_delay=0.4),
                        replace(held, incident_delay=1.0),
                        DelayStep(incident_delay=1.2, error="did not become healthy"),
                    ],
                )
            ],
        ),
    )


def test_the_cliffs_steps_are_predicted_at_their_own_delays_and_misses_marked():
    """At 16 visits/s, 8 threads hold a third party at 0.4 s (20 answers/s) and not at 1 s (8):
    a measurement that held at both agrees at 0.4 s and is marked at 1 s; the rate step of the
    cliff (16/s at the cliff's 1 s) is marked too; a delay that was not measured gets none."""
    run = _cliff_run()
    beside.attach(run)
    assert run.cliff is not None
    (c,) = run.cliff.targets
    at_04, at_1, failed = c.delays
    assert at_04.predicted is not None and at_04.predicted.differs == []
    assert at_1.predicted is not None and at_1.predicted.verdict != "held"
    assert at_1.predicted.lasted_s is not None and at_1.predicted.lasted_s < 10
    assert failed.predicted is None
    assert c.rates is not None and c.rates.steps[0].predicted is not None
    assert c.rates.steps[0].predicted.verdict == "fell"
    md = markdown(run).replace("\\*", "*")
    (line,) = pair(md, "story-uwsgi-threads", "0.4", measured="held", predicted="held")
    assert line.endswith("| yes |")
    (line,) = pair(md, "story-uwsgi-threads", "1", measured="held", predicted="collapsed")
    assert "**NO**: verdict" in line
    (line,) = pair(md, "story-uwsgi-threads", "16", measured="held", predicted="fell")
    assert "**NO**" in line


def test_a_rate_step_simulates_its_own_length_only(monkeypatch: pytest.MonkeyPatch):
    """The step's arrivals last its warm-up and window, as the generator sends them, whatever
    the story's incident and after."""
    seen = []
    simulate = model.simulate

    def spy(target, settings, *, incident=True):
        seen.append(settings)
        return simulate(target, settings, incident=incident)

    monkeypatch.setattr(model, "simulate", spy)
    (target,) = resolve_story(["uwsgi-threads"])
    model.rate_step(target, StorySettings(), 20, delay=1.0, warmup_s=3, measure_s=8)
    (settings,) = seen
    assert settings.duration == 11 and settings.arrival == "constant"


def test_the_report_command_adds_the_model_to_a_run_stored_without_it(tmp_path, capsys):
    from playground.core.runstore import RunStore

    run = sweep_run("story-uwsgi-threads")
    run_dir = RunStore.create_run(results_dir=tmp_path, run=run).run_dir
    assert main(["report", run_dir.name, "--results-dir", str(tmp_path)]) == 0
    md = (run_dir / "report.md").read_text()
    assert pair(md, "story-uwsgi-threads", "16", measured="fell", predicted="fell")


def test_the_remedies_and_the_contenders_rows_carry_the_model_or_say_why_not():
    """A remedy's row is predicted with its remedy; a contender the model does not cover says
    so in one cell of its row."""
    from playground.incident.storyresults import StoryTarget
    from playground.incident.targetresults import StorySummary

    measured = StorySummary(visits_served_during=1.0, recovery_s=1.0)
    run = StoryRun(
        run_id="measured",
        story=StorySettings(before_s=5, incident_s=10, after_s=10),
        targets=[
            StoryTarget(name="story-gunicorn-threads+breaker", summary=measured),
            StoryTarget(name="story-granian", summary=measured),
        ],
    )
    beside.attach(run)
    remedy, granian = (t.predicted for t in run.targets)
    assert remedy is not None and remedy.error is None and remedy.verdict
    assert granian is not None and granian.error and "Granian" in granian.error
    md = markdown(run)
    (line,) = [line for line in row(md, "story-granian") if "not modelled" in line]
    assert line.count("not modelled") == 1 and "the model covers" in line
    assert row(md, "story-gunicorn-threads+breaker", "measured", "held")


def test_a_measured_target_gets_the_models_odds_over_its_draws_beside_it():
    """The model draws a measured target DRAWS times: its P(collapse) counts those draws, and
    the figures beside the measurement are the representative draw's, as `predict` gives them."""
    from playground.incident.storyresults import StoryTarget
    from playground.incident.targetresults import StorySummary
    from playground.predict.draws import predict_odds

    settings = replace(SETTINGS, incident_delay=1.2, incident_s=6.0, before_s=3.0, after_s=6.0)
    measured = StoryTarget(
        name="story-uwsgi-threads",
        summary=StorySummary(visits_served_during=1.0, recovery_s=0.0),
    )
    run = StoryRun(run_id="measured", story=settings, targets=[measured])
    beside.attach(run)
    p = measured.predicted
    assert p is not None and p.draws == beside.DRAWS
    (registered,) = resolve_story(["story-uwsgi-threads"])
    alone = predict_odds(registered, settings, draws=beside.DRAWS, jobs=2)
    assert alone.odds is not None and alone.summary is not None
    outcomes = [d.outcome for d in alone.odds.draws]
    assert p.collapsed_draws == sum(o != "held" for o in outcomes)
    assert p.visits_served_during == alone.summary.visits_served_during
    row = next(line for line in markdown(run).splitlines() if "| predicted |" in line)
    assert f"P(collapse) {p.collapsed_draws / beside.DRAWS:.2f}, its {beside.DRAWS} draws'" in row
    # beside the draws' interval, the model's error where uWSGI's threads were scored
    assert "uwsgi-threads 2 x 64 at 2.28 s: P " in markdown(run)

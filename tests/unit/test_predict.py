"""The model of the incident (`playground predict`): against queueing theory, against the
generator's own schedule, and what it says at the story's defaults."""

from __future__ import annotations

import ast
import random
from dataclasses import replace
from pathlib import Path

import pytest

from playground.cli import main
from playground.core.jsonmodel import to_json
from playground.core.scenarios import resolve_story
from playground.incident import held
from playground.incident.settings import StorySettings
from playground.incident.targetresults import StorySummary
from playground.predict import schedule
from playground.predict.beside import differences
from playground.predict.run import predict_target
from playground.predict.simulate import Simulation
from playground.predict.system import system_for
from tests.conftest import load_module
from tests.queueing import erlang_c

SRC = Path(__file__).resolve().parents[2] / "src" / "playground"


def _pool(workers: int, threads: int, **changes):
    """uWSGI's pool as the model runs it, with nothing of the app's own: no CPU, no remedy, no
    health checks (requests of their own beside the queue's users)."""
    (target,) = resolve_story(["uwsgi-threads"])
    s = StorySettings(workers=workers, threads=threads)
    return replace(system_for(target, s), cpu_s=0.0, listen=10**9, checks=(), **changes)


def _open_loop(
    system, *, rate: float, seconds: float, upstream, seed: int = 7, arrival: str = "poisson"
):
    """Users who never give up and never reload, the given service times."""
    s = StorySettings(
        rate=rate, timeout=1e9, max_attempts=1, seed=seed, before_s=seconds, incident_s=1, after_s=0
    )
    arrivals = schedule.arrival_times(rate=rate, duration=seconds, arrival=arrival, seed=seed)
    sim = Simulation(system, s, delay=1.0, incident=False, upstream=upstream)
    return sim.run(arrivals), arrivals


def test_an_m_m_c_queue_waits_as_erlang_c_says():
    c, lam, mu = 4, 3.0, 1.0
    rng = random.Random(11)
    records, arrivals = _open_loop(
        _pool(1, c), rate=lam, seconds=8_000, upstream=lambda t: rng.expovariate(mu)
    )
    waits = [b - a for a, b in records.spans["queue"]]
    n = len(records.calls)
    assert n == len(arrivals)
    p_wait = erlang_c(c, lam / mu)
    mean_wait = p_wait / (c * mu - lam)
    assert len(waits) / n == pytest.approx(p_wait, rel=0.04)
    assert sum(waits) / n == pytest.approx(mean_wait, rel=0.05)


def test_littles_law_holds_inside_the_model():
    """L (the requests nginx holds, sampled once a second) = λ x W (the users' mean time)."""
    rng = random.Random(3)
    records, arrivals = _open_loop(
        _pool(1, 8), rate=6.0, seconds=2_000, upstream=lambda t: rng.expovariate(1.0)
    )
    seconds = [s.figures["nginx_active"] for s in records.samples[:2_000]]
    in_system = sum(seconds) / len(seconds)
    lam = len(arrivals) / 2_000
    w = sum(a.end - a.intended for a in records.attempts) / len(records.attempts)
    assert in_system == pytest.approx(lam * w, rel=0.03)


def test_an_overloaded_fifo_grows_at_lambda_minus_mu():
    """8 threads at 1 s a request serve 8/s; 10/s arrive: the queue grows by 2 a second."""
    records, _ = _open_loop(
        _pool(1, 8), rate=10.0, seconds=200, upstream=lambda t: 1.0, arrival="constant"
    )
    queue = [s.figures["nginx_active"] - s.figures["busy_cores"] for s in records.samples]
    slope = (queue[150] - queue[50]) / 100
    assert slope == pytest.approx(10.0 - 8.0, rel=0.1)


def _predict(name: str, **settings) -> StorySummary:
    (target,) = resolve_story([name])
    summary = predict_target(target, StorySettings(**settings)).summary
    assert summary is not None
    return summary


def test_users_who_do_not_reload_let_the_pool_recover_and_reloads_keep_it_down():
    """The metastable case: the same trigger, the same pool; without reloads it comes back
    after the third party does, with them it stays down (the sustaining effect)."""
    patient = _predict("gunicorn-threads", max_attempts=1)
    reloading = _predict("gunicorn-threads")
    assert patient.recovery_s is not None and patient.recovery_s <= 10
    assert reloading.recovery_s is None
    # ... and past a threshold in the trigger's length: a short incident it rides out.
    short = _predict("gunicorn-threads", incident_s=5)
    assert short.recovery_s is not None


def test_the_schedule_is_the_generators():
    ol = load_module("openloop", "loadgen/openloop.py")
    for arrival, seed in (("poisson", 1), ("poisson", 42), ("constant", 1)):
        settings = ol.Settings(
            url="http://x/",
            phases=(ol.Phase(60.0, None),),
            duration=90.0,
            timeout=4.0,
            arrival=arrival,
            seed=seed,
            refresh_backoff=2.0,
        )
        assert schedule.arrival_times(
            rate=60.0, duration=90.0, arrival=arrival, seed=seed
        ) == ol.arrival_times(settings)
        assert [
            schedule.refresh_wait(delay=1.0, backoff=2.0, seed=seed, visit=v, attempt=n)
            for v in range(50)
            for n in (1, 2)
        ] == [ol.refresh_wait(settings, visit=v, attempt=n) for v in range(50) for n in (1, 2)]


def _verdict(capsys, *argv: str, tmp_path: Path) -> str:
    # One draw: the representative draw is the only one (the odds: test_predict_odds.py).
    assert main(["predict", "--results-dir", str(tmp_path), "--draws", "1", *argv]) == 0
    out = capsys.readouterr().out
    return out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # One draw's verdict turns on the share it draws (the odds over draws:
        # test_predict_odds.py); at the share counted by hand the pool collapses.
        (["--busiest-share", "0.694", "gunicorn-threads"], "collapsed"),
        (["uwsgi-threads"], "held"),
        (["gunicorn-gevent"], "held"),
        (["uwsgi-gevent"], "held"),
        (["--workers", "1", "--threads", "128", "gunicorn-threads"], "held"),
    ],
)
def test_the_defaults_say_what_was_measured(argv, expected, tmp_path, capsys):
    from playground.commands.kinds import load_run, runs

    _verdict(capsys, *argv, tmp_path=tmp_path)
    ((_, (_, run)),) = runs(tmp_path)
    assert run.predicted and (tmp_path / run.run_id / "report.html").exists()
    assert load_run(tmp_path / run.run_id / "results.json").predicted
    (target,) = run.targets
    assert held.word(held.was_held(target)) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rate", "-5"], "rate must be above 0"),
        (["--threads", "0"], "threads must be at least 1"),
        (["gunicorn-threads+nope"], "unknown remedy"),
        (["uwsgi-threads+one-worker"], "one-worker"),
        (["uwsgi-threads+reuse-port"], "a setting of Gunicorn"),
        (["gunicorn-threads+thunder-lock"], "a setting of uWSGI"),
        (["gunicorn-gevent+timeout-3"], "runs gevent"),
        (["granian"], "the model covers"),
        (["--sweep", "rate", "--remedies"], "leave out --remedies"),
        (["--busiest-share", "1.5"], "busiest_share must be above 0 and at most 1"),
        (["--busiest-share", "0"], "busiest_share must be above 0 and at most 1"),
        (["--busiest-share", "nan"], "busiest_share must be above 0 and at most 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    assert main(["predict", "--results-dir", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_the_busiest_workers_share_decides_gthreads_verdict_and_is_kept_with_the_run(
    tmp_path, capsys
):
    """The kernel's split between Gunicorn's workers is the model's one measured knob: an even
    split holds the incident that the measured share collapses; the share a prediction used is
    in its results and its report, and a run that set none keeps no such key."""
    from playground.commands.kinds import runs

    (gunicorn,) = resolve_story(["gunicorn-threads"])
    measured = system_for(gunicorn, StorySettings()).busiest_share
    assert measured is not None and 0.6 < measured < 0.75
    assert system_for(gunicorn, StorySettings(busiest_share=0.5)).busiest_share == 0.5
    assert "busiest_share" not in to_json(StorySettings())

    _verdict(capsys, "--busiest-share", "0.5", "gunicorn-threads", tmp_path=tmp_path / "even")
    _verdict(capsys, "--busiest-share", "0.75", "gunicorn-threads", tmp_path=tmp_path / "uneven")
    ((_, (_, even)),) = runs(tmp_path / "even")
    ((_, (_, uneven)),) = runs(tmp_path / "uneven")
    assert held.was_held(even.targets[0]) and not held.was_held(uneven.targets[0])
    assert even.story.busiest_share == 0.5 and uneven.story.busiest_share == 0.75
    report = (tmp_path / "even" / even.run_id / "report.md").read_text()
    assert "takes 50.0% of the new connections (--busiest-share)" in report


def test_a_rate_sweep_finds_a_pools_cliff_near_littles_law(tmp_path, capsys):
    """uWSGI's shared queue falls where Little's law puts it (64/s at 2 s: a fall from
    64 / 0.95 = 67.4/s); Gunicorn's two queues well before."""
    out = _verdict(
        capsys, "--sweep", "rate", "uwsgi-threads", "gunicorn-threads", tmp_path=tmp_path
    )
    lines = {line.split(":")[0]: line for line in out.splitlines() if "falls at" in line}
    uwsgi = float(lines["story-uwsgi-threads"].split("falls at ")[1].split()[0])
    gthread = float(lines["story-gunicorn-threads"].split("falls at ")[1].split()[0])
    assert 64 <= uwsgi <= 75
    assert gthread < 56


def test_predicted_and_measured_disagree_on_the_verdict_or_ten_points():
    held = StorySummary(visits_served_during=1.0, recovery_s=1.0)
    assert differences(held, StorySummary(visits_served_during=0.96, recovery_s=2.0)) == []
    assert differences(held, StorySummary(visits_served_during=0.80, recovery_s=1.0))
    collapsed = StorySummary(visits_served_during=0.76, recovery_s=33.0)
    (why,) = differences(collapsed, StorySummary(visits_served_during=0.72, recovery_s=None))
    assert why.startswith("verdict")


def _imports(package: str) -> set[str]:
    found = set()
    for path in (SRC / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize(
    ("package", "never"),
    [
        ("predict", "playground.story"),
        ("story", "playground.predict"),
        ("incident", "playground.story"),
        ("incident", "playground.predict"),
    ],
)
def test_the_model_and_the_story_do_not_import_each_other(package, never):
    """Layers: each kind of run imports the core, never another kind."""
    sideways = {m for m in _imports(package) if m == never or m.startswith(never + ".")}
    assert not sideways, f"{package}/ imports {sorted(sideways)}"


def test_a_story_report_shows_the_prediction_beside_each_measured_row_and_marks_misses():
    """A measured run (here: figures made up where a measurement would put them) gets the
    model's figures beside each target, and the report marks the one that disagrees."""
    from playground.incident.storyresults import StoryRun
    from playground.predict.beside import attach
    from playground.report.document import render_markdown
    from playground.story.report import document

    settings = StorySettings()
    run = StoryRun(run_id="measured", story=settings)
    for name, served in (("uwsgi-threads", 1.0), ("gunicorn-gevent", 0.5)):
        (target,) = resolve_story([name])
        measured = predict_target(target, settings)
        assert measured.summary is not None
        measured.summary = replace(measured.summary, visits_served_during=served)
        run.targets.append(measured)
    attach(run)
    rows = {t.name: t.predicted for t in run.targets}
    assert rows["story-uwsgi-threads"].differs == []
    assert any("verdict" in why for why in rows["story-gunicorn-gevent"].differs)
    text = render_markdown(document(run, {}, None))
    assert "## Predicted beside measured" in text
    # The miss marked in bold (not the escaped asterisks that would show as they are).
    section = text.split("## Predicted beside measured", 1)[1]
    (miss,) = [line for line in section.splitlines() if line.startswith("| story-gunicorn-gevent")]
    assert miss.endswith("| **NO**: " + "; ".join(rows["story-gunicorn-gevent"].differs) + " |")


def test_a_prediction_is_a_run_that_compare_and_report_read(tmp_path, capsys, monkeypatch):
    from playground.commands.kinds import runs
    from playground.core import runstore

    # A run's id is the second it started: two predictions within one second would share it.
    ids = iter(["20261126-120000", "20261126-120001"])
    monkeypatch.setattr(runstore, "new_run_id", lambda: next(ids))
    for argv in (["uwsgi-threads"], ["--incident-delay", "2.5", "uwsgi-threads"]):
        assert main(["predict", "--results-dir", str(tmp_path), "--draws", "1", *argv]) == 0
    a, b = sorted(path.name for path, _ in runs(tmp_path))
    capsys.readouterr()
    assert main(["compare", a, b, "--results-dir", str(tmp_path)]) == 0
    assert "incident_delay" in capsys.readouterr().out
    assert [found[0].name for _, found in runs(tmp_path)] == ["predict", "predict"]
    assert main(["runs", "--results-dir", str(tmp_path)]) == 0
    assert main(["report", b, "--results-dir", str(tmp_path)]) == 0
    assert "not a measurement" in (tmp_path / b / "report.md").read_text()

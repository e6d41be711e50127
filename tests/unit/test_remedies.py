"""The remedies: registry targets layered on the story's thread pools, refused where they do
not fit, each compose override read by Compose as it is written (no container started)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from playground import cli, remedies
from playground.errors import UsageError
from playground.scenarios import REGISTRY, story_targets
from playground.story.run import as_run
from playground.storymodel import StorySettings
from tests.conftest import ROOT


def test_every_remedy_fits_every_thread_pool_of_its_servers_and_no_gevent():
    threads = [t for t in story_targets() if t.model == "threads"]
    for r in remedies.REMEDIES:
        for t in story_targets():
            fits = r.fits(t) is None
            assert fits == (t.model == "threads" and t.server in r.servers), (r.name, t.name)
        assert any(r.fits(t) is None for t in threads), r.name
    # Each variant is a registry target of its own, layered on its target's file.
    v = REGISTRY["story-gunicorn-threads+timeout-3"]
    assert v.kind == "story" and v.compose_files == (
        "story/gunicorn-threads.yml",
        "story/remedies/timeout-3.yml",
    )


def test_a_target_with_a_remedy_resolves_and_the_default_is_the_four_targets():
    (v,) = remedies.resolve(["uwsgi-threads+deadline"])
    assert v.name == "story-uwsgi-threads+deadline"
    assert [t.name for t in remedies.resolve([])] == [t.name for t in story_targets()]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("uwsgi-threads+retry-forever", "unknown remedy 'retry-forever'; remedies: timeout-1.5"),
        ("uwsgi-gevent+timeout-3", "timeout-3 is a remedy for a fixed thread pool"),
        ("uwsgi-threads+gunicorn-bounded-queue", "uwsgi-threads runs uWSGI"),
        ("fibers+timeout-3", "unknown story target 'fibers'"),
    ],
)
def test_an_unknown_or_unfitting_remedy_is_refused_with_the_reason(name, says):
    with pytest.raises(UsageError, match=says.replace("+", r"\+")):
        remedies.resolve([name])


def test_the_story_command_refuses_before_touching_docker(capsys, monkeypatch):
    # No docker on PATH: a refusal that got as far as Docker would say so instead.
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli.main(["story", "uwsgi-gevent+deadline"]) == 2
    assert "runs gevent" in capsys.readouterr().err
    # limit-conn's override caps at 128: with another pool it does not fit.
    assert cli.main(["story", "uwsgi-threads+limit-conn", "--threads", "32"]) == 2
    assert "caps at 128" in capsys.readouterr().err


def test_a_larger_pool_runs_as_its_remedy_says():
    s = StorySettings(threads=16)
    assert as_run(REGISTRY["story-uwsgi-threads+threads-4x"], s).per_worker == 64
    assert as_run(REGISTRY["story-uwsgi-threads"], s).per_worker == 16
    assert s.compose_env()["STORY_THREADS_4X"] == "64"


def test_one_worker_runs_the_whole_pool_in_one_gunicorn_process():
    s = StorySettings(threads=16, workers=3)
    one = as_run(REGISTRY["story-gunicorn-threads+one-worker"], s)
    assert (one.workers, one.per_worker) == (1, 48)
    assert one.title.startswith("nginx -> Gunicorn gthread 1 x 48 threads"), one.title
    assert s.compose_env()["STORY_THREADS_ALL"] == "48"
    # The registry's own shape: the story's 2 x 64 as 1 x 128.
    v = REGISTRY["story-gunicorn-threads+one-worker"]
    assert (v.workers, v.per_worker) == (1, 128)
    # uWSGI's workers share one listen queue: the remedy is Gunicorn's alone.
    with pytest.raises(UsageError, match="runs uWSGI"):
        remedies.resolve(["uwsgi-threads+one-worker"])


def _layered(target_file: str, override: str, env: dict[str, str] | None = None) -> dict:
    """`docker compose -f TARGET -f OVERRIDE config`: the services as Compose resolves them."""
    proc = subprocess.run(
        ["docker", "compose", "-f", target_file, "-f", override, "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["services"]


@pytest.mark.skipif(shutil.which("docker") is None, reason="needs the docker CLI (compose)")
def test_one_workers_override_sets_one_worker_with_every_thread():
    env = StorySettings(threads=16, workers=3).compose_env()
    services = _layered("story/gunicorn-threads.yml", "story/remedies/one-worker.yml", env)
    app = services["flask_app"]["environment"]
    assert (app["WORKERS"], app["THREADS"]) == ("1", "48")


@pytest.mark.skipif(shutil.which("docker") is None, reason="needs the docker CLI (compose)")
@pytest.mark.parametrize("remedy", remedies.REMEDIES, ids=lambda r: r.name)
def test_each_override_layers_on_its_targets_as_written(remedy):
    """`docker compose -f story/X.yml -f story/remedies/R.yml config`: the override names only
    services the story file has, and its mounted files exist where Compose resolves them."""
    for target in (t for t in story_targets() if remedy.fits(t) is None):
        services = _layered(target.compose_file, remedy.override)
        assert set(services) == {"ingress", "flask_app", "slow_api"}
        for volume in services["ingress"].get("volumes", []):
            if volume["target"].startswith("/etc/nginx/remedy/"):
                assert Path(volume["source"]).is_file(), volume


def test_the_remedies_table_is_the_pool_gevent_then_every_remedy_that_fits():
    (base,) = remedies.resolve(["gunicorn-threads"])
    rows = remedies.table([base])
    assert [r.name for r in rows[:2]] == ["story-gunicorn-threads", "story-gunicorn-gevent"]
    assert {r.name.split("+")[1] for r in rows[2:]} == {
        r.name for r in remedies.REMEDIES if r.fits(base) is None
    }
    assert "gunicorn-bounded-queue" in {r.name.split("+")[1] for r in rows[2:]}
    with pytest.raises(UsageError, match="runs gevent"):
        remedies.table(remedies.resolve(["uwsgi-gevent"]))


def test_a_target_is_titled_with_the_pool_it_runs():
    s = StorySettings(threads=8, workers=3)
    assert as_run(REGISTRY["story-uwsgi-threads"], s).title == "nginx -> uWSGI 3 x 8 threads"
    assert as_run(REGISTRY["story-uwsgi-threads+threads-2x"], s).title.startswith(
        "nginx -> uWSGI 3 x 16 threads"
    )


def test_a_remedy_targets_load_generator_gets_a_name_docker_accepts():
    """Docker refuses `+` in a container name: the one argv builder makes it a `.`."""
    from playground.compose import Docker

    argv = Docker(root=ROOT).loadgen_argv(
        network="n", tool_argv=["ab"], name="story-uwsgi-threads+timeout-1.5-load"
    )
    name = argv[argv.index("--name") + 1]
    assert name == "story-uwsgi-threads.timeout-1.5-load"
    assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+", name)

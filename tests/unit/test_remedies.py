"""The remedies: registry targets layered on the story's thread pools, refused where they do
not fit, each compose override read by Compose as it is written (no container started)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from playground import cli
from playground.core import remedies
from playground.core.errors import UsageError
from playground.core.scenarios import REGISTRY, remedies_table, resolve_story, story_targets
from playground.incident import analysis, captured
from playground.incident.captured import ServerSample
from playground.incident.settings import StorySettings
from playground.incident.storyresults import StoryTarget
from playground.story import headline, serverside
from playground.story.run import as_run, measure_incident
from tests.conftest import ROOT, needs
from tests.unit.test_story import ATTEMPTS, DATA, _result


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
    (v,) = resolve_story(["uwsgi-threads+deadline"])
    assert v.name == "story-uwsgi-threads+deadline"
    assert [t.name for t in resolve_story([])] == [t.name for t in story_targets()]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("uwsgi-threads+retry-forever", "unknown remedy 'retry-forever'; remedies: timeout-1.5"),
        ("uwsgi-gevent+timeout-3", "timeout-3 is a remedy for a fixed thread pool"),
        ("uwsgi-threads+gunicorn-bounded-queue", "uwsgi-threads runs uWSGI"),
        ("fibers+timeout-3", "unknown story target 'fibers'"),
        ("uwsgi-threads+reuse-port", "reuse_port.*uwsgi-threads runs uWSGI"),
        ("gunicorn-threads+thunder-lock", "thunder-lock.*gunicorn-threads runs Gunicorn"),
        ("gunicorn-gevent+haproxy", "haproxy is a remedy for a fixed thread pool"),
        ("uwsgi-gevent+thunder-lock", "runs gevent"),
    ],
)
def test_an_unknown_or_unfitting_remedy_is_refused_with_the_reason(name, says):
    with pytest.raises(UsageError, match=says.replace("+", r"\+")):
        resolve_story([name])


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
        resolve_story(["uwsgi-threads+one-worker"])


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


@needs(shutil.which("docker"), "the docker CLI (compose)")
def test_one_workers_override_sets_one_worker_with_every_thread():
    env = StorySettings(threads=16, workers=3).compose_env()
    services = _layered("story/gunicorn-threads.yml", "story/remedies/one-worker.yml", env)
    app = services["flask_app"]["environment"]
    assert (app["WORKERS"], app["THREADS"]) == ("1", "48")


@needs(shutil.which("docker"), "the docker CLI (compose)")
@pytest.mark.parametrize("remedy", remedies.REMEDIES, ids=lambda r: r.name)
def test_each_override_layers_on_its_targets_as_written(remedy):
    """`docker compose -f story/X.yml -f story/remedies/R.yml config`: the override names only
    services the story file has, and its mounted files exist where Compose resolves them."""
    for target in (t for t in story_targets() if remedy.fits(t) is None):
        services = _layered(target.compose_file, remedy.override)
        # Only a remedy that brings an image of its own adds a service (HAProxy's).
        added = set(services) - {"ingress", "flask_app", "slow_api"}
        assert added == ({"haproxy"} if remedy.builds else set()), added
        for service in services.values():
            for volume in service.get("volumes", []):
                if volume["type"] == "bind":
                    assert Path(volume["source"]).is_file(), volume


def test_the_remedies_table_is_the_pool_gevent_then_every_remedy_that_fits():
    (base,) = resolve_story(["gunicorn-threads"])
    rows = remedies_table([base])
    assert [r.name for r in rows[:2]] == ["story-gunicorn-threads", "story-gunicorn-gevent"]
    assert {r.name.split("+")[1] for r in rows[2:]} == {
        r.name for r in remedies.REMEDIES if r.fits(base) is None
    }
    assert "gunicorn-bounded-queue" in {r.name.split("+")[1] for r in rows[2:]}
    with pytest.raises(UsageError, match="runs gevent"):
        remedies_table(resolve_story(["uwsgi-gevent"]))


def test_a_target_is_titled_with_the_pool_it_runs():
    s = StorySettings(threads=8, workers=3)
    assert as_run(REGISTRY["story-uwsgi-threads"], s).title == "nginx -> uWSGI 3 x 8 threads"
    assert as_run(REGISTRY["story-uwsgi-threads+threads-2x"], s).title.startswith(
        "nginx -> uWSGI 3 x 16 threads"
    )


def test_a_remedy_targets_load_generator_gets_a_name_docker_accepts():
    """Docker refuses `+` in a container name: the one argv builder makes it a `.`."""
    from playground.core.compose import Docker

    argv = Docker(root=ROOT).loadgen_argv(
        network="n", tool_argv=["ab"], name="story-uwsgi-threads+timeout-1.5-load"
    )
    name = argv[argv.index("--name") + 1]
    assert name == "story-uwsgi-threads.timeout-1.5-load"
    assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+", name)


# --- reuse_port, thunder-lock and HAProxy --------------------------------------------------
@needs(shutil.which("docker"), "the docker CLI (compose)")
def test_reuse_port_gives_gunicorn_its_flag_and_changes_nothing_else():
    plain = _layered("story/gunicorn-threads.yml", "story/remedies/timeout-3.yml")
    app = _layered("story/gunicorn-threads.yml", "story/remedies/reuse-port.yml")["flask_app"]
    # Gunicorn adds GUNICORN_CMD_ARGS to its config file's settings.
    assert app["environment"]["GUNICORN_CMD_ARGS"] == "--reuse-port"
    assert app["command"] == plain["flask_app"]["command"]
    assert app["environment"]["WORKERS"] == plain["flask_app"]["environment"]["WORKERS"]


@needs(shutil.which("docker"), "the docker CLI (compose)")
def test_thunder_lock_is_uwsgis_option_from_its_environment():
    app = _layered("story/uwsgi-threads.yml", "story/remedies/thunder-lock.yml")["flask_app"]
    # uWSGI reads --thunder-lock from UWSGI_THUNDER_LOCK; its ini file is untouched.
    assert app["environment"]["UWSGI_THUNDER_LOCK"] == "1"
    assert app["command"][:3] == ["uwsgi", "--ini", "uwsgi.ini"]


@needs(shutil.which("docker"), "the docker CLI (compose)")
@pytest.mark.parametrize("story_file", ["story/gunicorn-threads.yml", "story/uwsgi-threads.yml"])
def test_haproxy_sits_between_nginx_and_the_app_holding_the_pools_size(story_file):
    env = StorySettings(threads=16, workers=3).compose_env()
    services = _layered(story_file, "story/remedies/haproxy.yml", env)
    ingress, haproxy, app = services["ingress"], services["haproxy"], services["flask_app"]
    conf = {v["target"]: v["source"] for v in ingress["volumes"]}
    assert Path(conf["/etc/nginx/playground.conf"]).name == "haproxy-nginx.conf"
    assert "haproxy" in ingress["depends_on"] and "flask_app" in haproxy["depends_on"]
    # maxconn and maxqueue follow the pool as run: 3 x 16.
    assert haproxy["environment"]["POOL"] == "48"
    assert haproxy["image"] == "flask-playground/haproxy"
    assert Path(haproxy["build"]["context"]).name == "haproxy"
    assert "127.0.0.1/3000" in " ".join(haproxy["healthcheck"]["test"])
    # HAProxy speaks HTTP to the app, uWSGI included.
    assert app["environment"]["PROTOCOL"] == "http"


def _haproxy_cfg() -> dict[str, list[str]]:
    """haproxy.cfg's directives: the first word(s) of each line -> the rest."""
    out: dict[str, list[str]] = {}
    for line in (ROOT / "story/remedies/haproxy.cfg").read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            key = " ".join(words[:2]) if words[0] in ("timeout", "option", "server") else words[0]
            out[key] = words[2:] if key != words[0] else words[1:]
    return out


def test_haproxys_queue_is_bounded_and_gives_up_before_the_users_do():
    cfg = _haproxy_cfg()
    server = cfg["server app"]
    assert server[0] == "flask_app:3000"
    params = dict(zip(server[1::2], server[2::2], strict=True))
    assert params == {"maxconn": '"${POOL}"', "maxqueue": '"${POOL}"'}
    queue = cfg["timeout queue"][0]
    assert queue.endswith("s") and float(queue[:-1]) < StorySettings().timeout
    assert "option abortonclose" in cfg
    # One connection per request, as nginx opens them: the split counts requests.
    assert "option http-server-close" in cfg


def test_haproxys_nginx_is_the_storys_nginx_but_for_its_upstream():
    ours = (ROOT / "story/remedies/haproxy-nginx.conf").read_text().splitlines()
    story = (ROOT / "story/nginx-http.conf").read_text().splitlines()

    def body(lines: list[str]) -> list[str]:  # from the first directive on
        return lines[next(i for i, line in enumerate(lines) if line.startswith("pid ")) :]

    assert body(ours) == [
        line.replace("server flask_app:3000;", "server haproxy:3000;") for line in body(story)
    ]


def test_only_haproxy_brings_an_image_for_the_runner_to_build():
    targets = resolve_story(
        ["gunicorn-threads", "gunicorn-threads+reuse-port", "uwsgi-threads+haproxy"]
    )
    assert remedies.own_images(targets) == [
        ("story/uwsgi-threads.yml", "story/remedies/haproxy.yml")
    ]


def test_make_images_builds_haproxy_and_the_three_are_in_the_remedies_table():
    makefile = (ROOT / "Makefile").read_text()
    builds = re.search(r"^IMAGE_BUILDS :=(.*?)\n(?!\t)", makefile, re.S | re.M)
    assert builds and "image-haproxy" in builds.group(1).split()
    assert re.search(r"^image-haproxy:\n\t.*remedies/haproxy\.yml build haproxy", makefile, re.M)
    for base, mine in (("gunicorn-threads", "reuse-port"), ("uwsgi-threads", "thunder-lock")):
        rows = {t.name for t in remedies_table(resolve_story([base]))}
        assert {f"story-{base}+{mine}", f"story-{base}+haproxy"} <= rows


# --- the split between workers -------------------------------------------------------------
TCP_HEADER = (
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode"
)


def _tcp(local_port: int, state: str, inode: int) -> str:
    return (
        f"   0: 0200110A:{local_port:04X} 0300110A:D1C2 {state} 00000000:00000000 00:00000000 "
        f"00000000 10001        0 {inode} 1 0000000000000000 20 4 30 10 -1"
    )


def test_each_worker_holds_the_app_connections_among_its_own_sockets():
    table = "\n".join(
        [
            TCP_HEADER,
            _tcp(3000, "0A", 10),  # the listening socket, shared: not a connection
            _tcp(3000, "01", 11),  # established, worker 200's
            _tcp(3000, "08", 12),  # close-wait (nginx gave up), still held by worker 200
            _tcp(3000, "01", 13),  # worker 100's
            _tcp(41000, "01", 14),  # worker 100's call to the third party: another port
        ]
    )
    sockets = {
        200: serverside.socket_inodes(["socket:[10]", "socket:[11]", "socket:[12]", "/dev/null"]),
        100: serverside.socket_inodes(["socket:[10]", "socket:[13]", "socket:[14]", "pipe:[9]"]),
    }
    assert sockets[100] == {10, 13, 14}
    # In order of pid: worker 100 first.
    assert serverside.worker_connections(table, sockets, port=3000) == [1, 2]
    assert serverside.worker_connections(table, {}, port=3000) == []


def test_the_split_is_each_workers_mean_over_the_incident():
    seconds = [[1, 1], [60, 20], [64, 30], None, [70, 22], [5, 5]]
    assert captured.worker_split(seconds, lo=1, hi=5) == [64.7, 24.0]
    assert captured.worker_split(seconds, lo=3, hi=4) is None
    # A worker that came later (a restart) is averaged over the seconds it was there.
    assert captured.worker_split([[4], [6, 2]]) == [5.0, 2.0]


def test_the_split_goes_from_the_samples_into_the_summary_and_the_report():
    settings = StorySettings(before_s=2, incident_s=4, after_s=6, timeout=4)
    samples = [
        ServerSample(monotonic=100.0 + t, figures={"worker_connections": [60 + t, 20]})
        for t in range(12)
    ]
    t = measure_incident(
        StoryTarget(name="story-gunicorn-threads", model="threads"),
        output=analysis.generator_output(_result(ATTEMPTS)),
        samples=samples,
        access_text="",
        settings=settings,
    )
    assert t.seconds[3].worker_connections == [63, 20]
    # The incident is seconds 2-5 of the run (the generator's own clock starts at 100).
    assert t.summary is not None and t.summary.worker_connections_during == [63.5, 20.0]
    row = headline.cells(t, settings.after_s)
    assert row["connections per worker during (mean)"] == "64 / 20"
    gevent = replace(t, name="story-gunicorn-gevent", model="gevent")
    row = headline.cells(gevent, settings.after_s)
    assert row["connections per worker during (mean)"] == "-"


def _captured(name: str) -> tuple[str, dict[int, set[int]]]:
    """A /proc/net/tcp table and each worker's socket fds (`pid socket:[inode]`), captured from
    an app container 32 s into a story run (mid incident); trimmed to the app's port."""
    table = (DATA / f"proc_{name}_net_tcp.txt").read_text()
    links: dict[int, list[str]] = {}
    for line in (DATA / f"proc_{name}_fds.txt").read_text().splitlines():
        pid, link = line.split()
        links.setdefault(int(pid), []).append(link)
    return table, {pid: serverside.socket_inodes(ls) for pid, ls in links.items()}


def test_a_captured_uwsgi_pool_has_one_worker_full_while_connections_wait_in_the_kernel():
    table, sockets = _captured("uwsgi_threads_incident")
    # uWSGI 2 x 64 at 2.5 s: one worker with all 64 threads busy, the other with 30, while
    # 101 connections waited in the listen queue (uWSGI's default 100, plus one).
    assert serverside.worker_connections(table, sockets, port=3000) == [64, 30]
    assert serverside.accept_queue(table, port=3000) == 101


def test_a_captured_gthread_pool_behind_haproxy_holds_no_more_than_haproxys_maxconn():
    table, sockets = _captured("gthread_haproxy_incident")
    split = serverside.worker_connections(table, sockets, port=3000)
    assert split == [57, 47] and sum(split) <= 2 * 64
    # Gunicorn accepts at once: nothing waits in the kernel's queue.
    assert serverside.accept_queue(table, port=3000) == 0

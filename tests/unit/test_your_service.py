"""The story against your own service (docs/your-service.md), without Docker: bad input is
refused before anything starts, a by-hand generator run becomes a story run the report and
compare read, and a run measured by URL says it sampled nothing on the server's side."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from aiohttp import web

from playground import cli
from playground.commands import kinds
from playground.incident.outside import IncidentCommand, OutsideTarget
from playground.incident.settings import StoryError, StorySettings
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.report.document import render_markdown
from playground.story import byhand, delayproxy, external
from playground.story import report as story_report
from playground.story.delayproxy import Dependency
from playground.story.netem import NetemTarget
from tests.conftest import load_module
from tests.unit.test_openloop import serve


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("slow_api_delayed", "expected NAME=URL"),
        ("bad name=http://slow_api:4000", "expected NAME=URL"),
        ("x=https://slow_api:4000", "must be http://HOST"),
        ("x=http://slow_api:port", "port is not a number"),
        ("slow_api=http://slow_api:4000", "a name of its own"),
        ("x=http://slow_api:9901", "admin"),
    ],
)
def test_a_bad_dependency_is_refused_with_a_reason(text, says):
    with pytest.raises(StoryError, match=says):
        Dependency.parse(text)


def test_the_proxy_listens_on_the_dependencys_port_under_its_own_name():
    dep = Dependency.parse("slow_api_delayed=http://slow_api:4000")
    argv = delayproxy.run_argv(dep, network="net", run_id="r1")
    assert argv[argv.index("--network-alias") + 1] == "slow_api_delayed"
    assert "UPSTREAM=slow_api:4000" in argv and "LISTEN=4000" in argv
    assert any(a.startswith(delayproxy.DELAY_PROXY_LABEL + "=r1/") for a in argv)
    # The incident: slow_api's own control's two numbers, so a by-hand run reads either.
    url = dep.incident_url(seconds=1.3, lasts=30)
    assert url == "http://slow_api_delayed:9901/delay?extra=1.3&seconds=30"


@pytest.mark.parametrize(
    ("outside", "story", "says"),
    [
        (dict(url="ftp://x/"), {}, "expected http"),
        (dict(url="http://x/", dependency=Dependency.parse("d=http://y")), {}, "--network"),
        (
            dict(url="http://x/", network="n", dependency=Dependency.parse("d=http://y")),
            dict(incident_delay=5.0),
            "past the users' patience",
        ),
        (dict(url="http://x/", incident_end="true"), {}, "nothing to end"),
        (
            dict(
                url="http://x/",
                network="n",
                dependency=Dependency.parse("d=http://y"),
                netem=NetemTarget.parse("c:h"),
            ),
            {},
            "choose one",
        ),
    ],
)
def test_settings_that_cannot_make_a_run_are_refused(outside, story, says):
    with pytest.raises(StoryError, match=says):
        external.OutsideSettings(**outside).check(StorySettings(**story))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--slow-dependency", "d=http://y:1"], "--network NAME"),
        (
            ["--incident-delay", "5", "--network", "n", "--slow-dependency", "d=http://y"],
            "patience",
        ),
        (["gunicorn-threads"], "--targets"),
        (["--sweep"], "--sweep"),
        (["--slow-netem", "nocolon"], "CONTAINER:HOST"),
    ],
)
def test_the_command_refuses_bad_input_in_one_line_before_docker(args, says, capsys, tmp_path):
    code = cli.main(
        ["story", "--url", "http://127.0.0.1:9/", *args, "--results-dir", str(tmp_path)]
    )
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # no run was made


def test_the_incidents_end_runs_whenever_its_start_did():
    ran: list[str] = []
    started = threading.Event()

    def action(name):
        def act():
            ran.append(name)
            if name == "start":
                started.set()
            return 0, name

        return act

    timed = external._Timed([("start", 0.0, action("start")), ("end", 30.0, action("end"))])
    timed.start()
    assert started.wait(timeout=10), "the start never ran"
    timed.finish()  # stopped early (a Ctrl-C): the end is not left waiting 30 s
    assert ran == ["start", "end"]
    timed = external._Timed([("start", 30.0, action("start")), ("end", 60.0, action("end"))])
    timed.start()
    timed.finish()  # stopped before it started: nothing to end
    assert ran == ["start", "end"]


def _generator_run(tmp_path: Path) -> Path:
    """A real run of openloop.py against a local server whose answers slow from 0.05 s to
    0.6 s (past the users' 0.4 s) when the control request comes, for 2 s."""
    ol = load_module("openloop", "loadgen/openloop.py")
    state = {"until": 0.0}

    async def handler(request: web.Request) -> web.Response:
        if request.method == "POST":
            state["until"] = time.monotonic() + float(request.query["seconds"])
            return web.Response(text="ok")
        slow = time.monotonic() < state["until"]
        await asyncio.sleep(0.6 if slow else 0.05)
        return web.Response(text="hi")

    out = tmp_path / "run.json"
    with serve(handler) as url:
        args = [
            *("--url", url + "?delay=0.05", "--rate", "20", "--duration", "6"),
            *("--timeout", "0.4", "--max-attempts", "1", "--processes", "1"),
            # The compiled sender lives in the load generator's image, not on the host.
            *("--engine", "asyncio"),
            *("--at", f"2:POST:{url}?extra=0.55&seconds=2", "--out", str(out)),
        ]
        ol.main(args)
    return out


def test_a_by_hand_generator_run_becomes_a_story_run(tmp_path, capsys):
    output = _generator_run(tmp_path)
    assert byhand.is_generator_output(output)
    s = byhand.settings_of(json.loads(output.read_text()), where="run.json")
    assert (s.rate, s.before_s, s.incident_s, s.after_s) == (20, 2, 2, 2)
    assert (s.normal_delay, round(s.incident_delay, 2), s.timeout) == (0.05, 0.6, 0.4)
    code = cli.main(
        ["report", str(output), "--name", "mine", "--results-dir", str(tmp_path / "res")]
    )
    assert code == 0, capsys.readouterr().err
    run = kinds.load_run(kinds.resolve_run(tmp_path / "res", "latest"))
    assert isinstance(run, StoryRun)
    (t,) = run.targets
    assert t.name == "mine" and t.adds_up == []
    # Served before; during the 2 s every answer took past the users' patience.
    assert t.summary.visits_served_before > 0.9 > 0.2 > t.summary.visits_served_during
    assert any(f.code == "collapsed" for f in t.findings)
    assert "kept as run" in capsys.readouterr().out
    # ... and `compare` reads it like any story run.
    assert (
        cli.main(["compare", run.run_id, run.run_id, "--results-dir", str(tmp_path / "res")]) == 0
    )


def test_a_file_that_is_no_generator_run_is_refused(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text('{"tool":"openloop","settings":{}}')
    assert cli.main(["report", str(path), "--results-dir", str(tmp_path)]) == 2
    assert "not the generator's output" in capsys.readouterr().err


def test_a_run_by_url_says_it_sampled_nothing_on_the_servers_side(tmp_path):
    t = StoryTarget(
        name="mine",
        error="the generator wrote no result",
        outside=OutsideTarget(
            url="http://ingress:8080/",
            network="n",
            mechanism="commands",
            commands=[
                IncidentCommand(
                    when="start", command="echo on", at_s=20.1, exit=0, output="flag on\n"
                )
            ],
        ),
    )
    run = StoryRun(run_id="r", targets=[t])
    blocks = story_report.document(run, {"mine": "chart.png"}, None)
    text = render_markdown(blocks)
    assert "nothing was sampled on its side" in text
    assert "peak listen queue" not in text and "threads before" not in text
    assert "flag on" in text and "echo on" in text
    # A story target of the playground's own keeps every column.
    own = StoryRun(run_id="r", targets=[StoryTarget(name="story-x", summary=None, error="x")])
    assert "peak listen queue" in render_markdown(story_report.document(own, {}, None))


class _Labelled:
    """Docker as remove_leftovers sees it: the labelled containers, and what it removed."""

    def __init__(self, found):
        self.found, self.removed = found, []

    def labelled(self, label):
        return self.found

    def remove(self, container):
        self.removed.append(container)


def test_only_a_proxy_whose_command_is_gone_is_removed_as_a_leftover():
    gone = subprocess.Popen(["true"])
    gone.wait()
    docker = _Labelled([("aaa", f"r1/{gone.pid}"), ("bbb", f"r2/{os.getpid()}")])
    said: list[str] = []
    assert delayproxy.remove_leftovers(docker, said.append) == ["aaa"]
    assert docker.removed == ["aaa"] and "left behind by run r1" in said[0]

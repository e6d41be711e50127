"""The pieces of `playground swarm` that need no daemon: how a sender's JSON leaves its task
through the log and comes back, and how a run on a stack is shown."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from playground.incident.openloop import GENERATOR_CPU_SHARES
from playground.incident.storyresults import StoryRun, StoryTarget
from playground.incident.swarmresults import SenderRecord, SwarmShape
from playground.incident.targetresults import GeneratorCheck
from playground.report.document import render_markdown
from playground.story import report as story_report
from playground.swarm import senderjobs

# A generator stand-in: writes a large JSON document to the file after --out, as the real one
# does; far over one log line, so the lines must be split and joined in order.
WRITER = (
    "import json, sys; out = sys.argv[sys.argv.index('--out') + 1]; "
    "json.dump({'attempts': [[i, i * 0.5, 'x' * (i % 7)] for i in range(40000)]}, open(out, 'w'))"
)


def test_a_senders_json_goes_through_its_log_and_comes_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task's own shell script (gzip, base64 in marked lines, sed) run here, its output
    read back: the same document, whatever else the task printed between the lines."""
    monkeypatch.setattr(senderjobs, "SENDER_OUT", str(tmp_path / "openloop.json"))
    argv = senderjobs.in_task([sys.executable, "-c", WRITER])
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) > 2 and all(len(line) < 16 * 1024 for line in lines)
    noisy = "\n".join(["starting", *lines[:1], "a warning", *lines[1:], ""])
    data = senderjobs.from_log(noisy)
    assert data == json.loads((tmp_path / "openloop.json").read_text())


@pytest.mark.parametrize(("exit_status", "task_ends_well"), [(0, True), (3, True), (2, False)])
def test_a_sender_whose_self_check_failed_still_hands_in_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exit_status: int, task_ends_well: bool
) -> None:
    """The generator exits 3 when it ran to the end off its schedule: its records stand
    (marked invalid, so the merged run is not trusted) and the task ends well; any other
    failure fails the task, records or not."""
    monkeypatch.setattr(senderjobs, "SENDER_OUT", str(tmp_path / "openloop.json"))
    code = f"{WRITER}; sys.exit({exit_status})"
    done = subprocess.run(
        senderjobs.in_task([sys.executable, "-c", code]), capture_output=True, text=True
    )
    assert (done.returncode == 0) is task_ends_well
    assert senderjobs.from_log(done.stdout) == json.loads((tmp_path / "openloop.json").read_text())


def test_a_log_with_no_records_or_a_broken_line_is_refused() -> None:
    with pytest.raises(ValueError, match="no records"):
        senderjobs.from_log("Traceback (most recent call last):\n  boom\n")
    good = base64.b64encode(gzip.compress(b'{"a": 1}')).decode()
    assert senderjobs.from_log(f"{senderjobs.SENDER_MARK} {good}\n") == {"a": 1}
    with pytest.raises(ValueError, match="cut or broken"):
        senderjobs.from_log(f"{senderjobs.SENDER_MARK} {good[:-8]}\n")


def test_each_sender_is_a_container_on_the_stacks_network_at_the_generators_weight() -> None:
    """A Swarm service cannot be given a CPU weight: a sender is a container of its engine,
    joined to the stack's attachable network, weighted as the story's generator is."""
    argv = senderjobs.sender_container(
        "playground_sender1", image="reg:5000/o:t", command=["python", "x"]
    )
    assert argv[:3] == ["docker", "run", "--detach"]
    assert argv[argv.index("--name") + 1] == "playground_sender1"
    assert argv[argv.index("--network") + 1] == "playground_default"
    assert argv[argv.index("--cpu-shares") + 1] == str(GENERATOR_CPU_SHARES)
    assert argv[argv.index("reg:5000/o:t") + 1 :][:2] == ["sh", "-c"]
    assert senderjobs.sender_names(3) == [f"playground_sender{i}" for i in range(3)]


def _shape(valid: list[bool]) -> SwarmShape:
    return SwarmShape(
        nodes=1,
        replicas=2,
        app="flask_app",
        registry="started here on 127.0.0.1:5000",
        senders=[
            SenderRecord(
                sender=i,
                visits=100,
                attempts=120,
                node="node-a",
                check=GeneratorCheck(valid=v, reasons=[] if v else ["send lag p99 12 ms"]),
            )
            for i, v in enumerate(valid)
        ],
        removed=["flask_app: build removed (Swarm does not build)"],
        stack_file="raw/story-x/stack.json",
    )


def test_a_run_on_a_stack_shows_its_shape_and_leaves_out_the_servers_side() -> None:
    t = StoryTarget(name="story-x", error="x", swarm=_shape([True, False]))
    # A repeat whose sender failed before the stack's shape was taken is still on the stack.
    failed = StoryTarget(name="story-x", repeat=2, error="sender playground_sender0 ended")
    run = StoryRun(run_id="r", targets=[t, failed])
    text = render_markdown(story_report.document(run, {"story-x": "c.png"}, None))
    assert "1 node(s), 2 replica(s) of flask_app, 2 sender(s); 1 of 2 kept their schedule" in text
    assert "samples none of them" in text
    assert "peak listen queue" not in text and "threads before" not in text
    assert "INVALID: send lag p99 12 ms" in text and "raw/story-x/stack.json" in text
    # The same target without a stack keeps the server's columns and says nothing of Swarm.
    own = render_markdown(
        story_report.document(
            StoryRun(run_id="r", targets=[StoryTarget(name="story-x", error="x")]), {}, None
        )
    )
    assert "peak listen queue" in own and "Swarm" not in own


def test_a_run_on_a_stack_round_trips_through_its_results_file() -> None:
    from playground.core.jsonmodel import to_json

    run = StoryRun(run_id="r-swarm", targets=[StoryTarget(name="story-x", swarm=_shape([True]))])
    again = StoryRun.from_json(json.loads(json.dumps(to_json(run))))
    assert again.targets[0].swarm == run.targets[0].swarm
    # A target of an ordinary story run has no `swarm` key at all.
    assert "swarm" not in to_json(StoryTarget(name="story-y"))


def test_a_run_on_a_stack_is_its_own_kind_and_redraws_as_a_story(tmp_path: Path) -> None:
    from playground.commands import kinds
    from playground.core.jsonmodel import to_json

    t = StoryTarget(name="story-x", error="not ready after 120 s", swarm=_shape([True]))
    for run_id, word in (("20261127-010203-swarm", "swarm"), ("r-story", "story")):
        folder = tmp_path / run_id
        folder.mkdir()
        (folder / "results.json").write_text(
            json.dumps(to_json(StoryRun(run_id=run_id, kind=word, targets=[t])))
        )
        kind, run = kinds.load(folder)
        assert kind.name == word and isinstance(run, StoryRun)
    kind, run = kinds.load(tmp_path / "20261127-010203-swarm")
    paths = kind.write_report(tmp_path / "20261127-010203-swarm", run)
    assert "On Docker Swarm" in paths[0].read_text()

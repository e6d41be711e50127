"""A node lost mid-run on the three engines (`playground swarm --engines --lose HOW:NODE`):
what is refused before Docker is touched, where the app and the senders are placed, and how a
repeat that lost a node with a task of the stack on it is reported: its verdict withheld, its
figures kept, and a repeat whose lost node held nothing keeps its verdict."""

from __future__ import annotations

import json

import pytest

from playground import cli
from playground.commands import swarm as command
from playground.core.errors import UsageError
from playground.core.jsonmodel import to_json
from playground.incident.held import was_held
from playground.incident.storyresults import StoryRun, StorySummary, StoryTarget
from playground.incident.swarmresults import NodeLost, SenderRecord, SwarmShape
from playground.report.document import render_markdown
from playground.story import findings, repeats
from playground.story import report as story_report
from playground.swarm import engines, senderjobs
from playground.swarm.settings import loss_plan, swarm_settings
from tests.unit.test_swarm_stack import CONFIG

WORKERS = ("worker1", "worker2")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--lose", "drain:worker1"], "--lose needs --engines"),
        (["--engines", "--lose", "crash:worker1"], "--lose takes HOW:NODE"),
        (["--engines", "--lose", "drain"], "--lose takes HOW:NODE"),
        (["--engines", "--lose", "stop:manager"], "'manager' is not a worker"),
        (["--engines", "--lose", "drain:worker1", "--lose-at", "500"], "--lose-at must be"),
        (["--engines", "--registry", "127.0.0.1:5000"], "leave out --registry"),
    ],
)
def test_a_loss_or_engines_asked_wrongly_is_one_line_and_exit_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command, "session", lambda *a, **k: pytest.fail("Docker was reached"))
    assert cli.main(["swarm", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err
    assert "\n" not in err and "Traceback" not in err


def test_a_loss_defaults_to_five_seconds_into_the_incident() -> None:
    plan = loss_plan("stop:worker2", at_s=25.0, engines=True, workers=WORKERS, duration_s=90)
    assert plan is not None and (plan.how, plan.node, plan.at_s) == ("stop", "worker2", 25.0)
    assert loss_plan(None, at_s=25.0, engines=False, workers=WORKERS, duration_s=90) is None
    with pytest.raises(UsageError):
        loss_plan("stop:worker2", at_s=-1, engines=True, workers=WORKERS, duration_s=90)


def test_on_the_engines_the_app_goes_to_the_workers_and_the_senders_to_other_nodes_first() -> None:
    from playground.swarm.stack import stack_from_config

    on = swarm_settings(registry=None, replicas=2, senders=2, engines=True)
    assert on.registry == "127.0.0.1:5000"
    made = stack_from_config(
        config=CONFIG,
        registry=on.registry,
        tag="t",
        app="flask_app",
        replicas=2,
        app_constraint=on.app_constraint,
    )
    services = made.document["services"]
    assert services["flask_app"]["deploy"]["placement"] == {"constraints": ["node.role==worker"]}
    assert "placement" not in services["ingress"]["deploy"]
    assert made.front == "ingress"
    nodes = ("manager", "worker1", "worker2")
    on = swarm_settings(registry=None, replicas=2, senders=2, engines=True, nodes=nodes)
    assert [on.sender_node(i) for i in (0, 1, 2, 3)] == ["manager", "worker1", "worker2", "manager"]
    # Nodes without a replica of the app come first.
    assert [on.sender_node(i, app_on=["worker1"]) for i in (0, 1, 2)] == [
        "manager",
        "worker2",
        "worker1",
    ]
    # No sender goes to the node to be lost.
    plan = loss_plan("drain:worker1", at_s=25, engines=True, workers=WORKERS, duration_s=90)
    losing = swarm_settings(
        registry=None, replicas=2, senders=2, engines=True, nodes=nodes, lose=plan
    )
    assert losing.sender_node(1) == "worker2"
    # One engine: every sender on it.
    one = swarm_settings(registry=None, replicas=2, senders=2)
    assert one.app_constraint is None and one.sender_node(0) is None
    # A sender on a node is run by that node's engine; on one engine, by this machine's.
    job = senderjobs.SenderJob("s0", "worker2", ["docker", "run", "x"])
    assert senderjobs.on_its_engine(job, job.argv)[-3:] == ["docker", "run", "x"]
    assert senderjobs.on_its_engine(job, job.argv)[:3] == [
        "docker",
        "exec",
        engines.container("worker2"),
    ]
    alone = senderjobs.SenderJob("s0", None, ["docker", "run", "x"])
    assert senderjobs.on_its_engine(alone, alone.argv) == ["docker", "run", "x"]


def _target(on_it: list[str], served: float) -> StoryTarget:
    lost = NodeLost(
        how="drain",
        node="worker1",
        at_s=25.2,
        marked_s=1.0,
        on_it=on_it,
        events=["+0.4 s: flask_app.1 on worker1: Shutdown (desired Shutdown)"],
        running_after={"flask_app": 1, "ingress": 1},
        restored="worker1 Ready and Active again after 1 s",
    )
    t = StoryTarget(
        name="story-x",
        summary=StorySummary(visits_served_during=served, recovery_s=3.0),
        swarm=SwarmShape(
            nodes=3,
            replicas=2,
            app="flask_app",
            senders=[SenderRecord(sender=0, visits=5400, attempts=5400, node="manager")],
            placement={"flask_app": ["worker1", "worker2"], "ingress": ["worker2"]},
            lost=lost,
        ),
    )
    t.findings = findings.for_target(t)
    return t


def test_a_repeat_that_lost_a_node_with_the_app_on_it_has_no_verdict() -> None:
    affected = _target(["flask_app.1"], served=0.40)
    assert was_held(affected) is None
    codes = {f.code for f in affected.findings}
    assert "withheld" in codes and not codes & {"held", "collapsed", "recovered"}
    assert findings.trusted(affected)
    # A lost node that held nothing of the stack leaves the verdict as measured.
    untouched = _target([], served=0.40)
    assert was_held(untouched) is False
    # Counted over repeats, the withheld one counts neither way.
    spread = repeats.spreads([affected, untouched], after_s=40)[0]
    assert spread.frequency("collapsed") is not None
    assert spread.frequency("collapsed").n == 1  # type: ignore[union-attr]


def test_the_report_says_what_was_lost_and_the_record_round_trips() -> None:
    t = _target(["flask_app.1"], served=0.40)
    run = StoryRun(run_id="r-swarm", targets=[t])
    text = render_markdown(story_report.document(run, {"story-x": "c.png"}, None))
    assert "Node lost: worker1 drained at 25.2 s of the run, with flask_app.1 on it" in text
    assert "flask_app on worker1, worker2; ingress on worker2" in text
    assert "verdict is withheld" in text and "flask_app.1 on worker1: Shutdown" in text
    again = StoryRun.from_json(json.loads(json.dumps(to_json(run))))
    assert again.targets[0].swarm == t.swarm


def test_the_compact_record_keeps_no_verdict_for_a_withheld_repeat_and_names_the_loss() -> None:
    from playground.incident import runrecords

    affected, untouched = _target(["flask_app.1"], served=0.40), _target([], served=0.40)
    run = StoryRun(run_id="20261129-120000-swarm", kind="swarm", targets=[affected, untouched])
    kept = runrecords.from_run(run, machine="2 cores").targets
    assert [t.verdict for t in kept] == [None, "collapsed"]
    assert kept[0].visits_served_during == 0.4
    assert kept[0].stack is not None
    assert "flask_app on worker1, worker2, 1 sender(s) on manager" in kept[0].stack
    assert kept[0].stack.endswith("worker1 drained at 25.2 s with flask_app.1 on it")


class _Recorder:
    """Stands in for this machine's docker: keeps each command it is given."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []

    def run(self, argv: list[str], **_: object) -> None:
        self.argvs.append(argv)


def test_a_senders_node_runs_at_the_senders_weight_and_goes_back_even_on_an_interrupt():
    docker = _Recorder()
    with pytest.raises(KeyboardInterrupt):
        with engines.weighted(docker, ["worker2", "manager", "manager"], shares=262144):  # type: ignore[arg-type]
            assert docker.argvs == [
                ["docker", "update", "--cpu-shares", "262144", engines.container("manager")],
                ["docker", "update", "--cpu-shares", "262144", engines.container("worker2")],
            ]
            raise KeyboardInterrupt
    assert docker.argvs[2:] == [
        ["docker", "update", "--cpu-shares", "1024", engines.container("manager")],
        ["docker", "update", "--cpu-shares", "1024", engines.container("worker2")],
    ]

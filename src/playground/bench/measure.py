"""A bench or scale run measured into its store: the plan (made once the store exists, where
a probe must run first), then the harness's calibration, then the run marked finished."""

from __future__ import annotations

from collections.abc import Callable

from playground.bench.plan import Plan
from playground.bench.runner import Progress, Runner
from playground.core.compose import Docker
from playground.core.results import Run
from playground.core.runstore import RunStore
from playground.core.scenarios import CALIBRATION

# What makes a run's plan once its store exists (`playground scale`: a probe first, run with
# the runner it is given, then the sweep at the delays the probe set).
Prepare = Callable[[RunStore[Run], Callable[[Plan], Runner]], Plan]


def measure_run(
    docker: Docker,
    store: RunStore[Run],
    progress: Progress,
    *,
    plan: Plan | Prepare,
) -> None:
    """Every target of the plan, then the calibration; a Ctrl-C leaves the finished targets
    in the store (each is saved as it ends) and goes up to the caller."""

    def runner_for(p: Plan) -> Runner:
        return Runner(docker=docker, store=store, plan=p, progress=progress)

    chosen = plan if isinstance(plan, Plan) else plan(store, runner_for)
    runner_for(chosen).run(CALIBRATION)
    store.finish()

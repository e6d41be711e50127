"""The story's results model: a `playground story` run as typed objects with one JSON form.

A story run is stored like every run (`results/<run-id>/results.json`, by
:class:`playground.core.runstore.RunStore`) and converted by the same functions as a bench run
(:mod:`playground.core.jsonmodel`): a missing key reads as its default, a value of the wrong type is a
:class:`~playground.core.jsonmodel.ModelError` naming where, unknown keys are kept. Its header is the
bench run's (:class:`~playground.core.results.RunHeader`, ``kind`` "story"); its body is the story's
settings (:mod:`playground.incident.settings`), one :class:`StoryTarget` per target through the
incident (what each recorded: :mod:`playground.incident.targetresults`), the sweep, the cliff, the
cross-check and the spread of the repeats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from playground.core import jsonmodel
from playground.core.jsonmodel import ModelError, doc
from playground.core.odds import Frequency
from playground.core.results import SCHEMA_VERSION, Finding, RunHeader
from playground.core.target import Target
from playground.incident.mechanism import Mechanism
from playground.incident.oddsresults import Draw, MapCell, MapPoint, Odds, OddsMap
from playground.incident.outside import IncidentCommand, OutsideTarget
from playground.incident.settings import MeasuredSplit, StoryError, StorySettings, SweepSettings
from playground.incident.swarmresults import NodeLost, SenderRecord, SwarmShape
from playground.incident.targetresults import (
    AbPhase,
    ClosedLoop,
    GeneratorCheck,
    HostSteal,
    Incident,
    InvalidTry,
    PredictedFigures,
    StorySecond,
    StorySummary,
    ToolFigures,
)


@dataclass(frozen=True)
class Settled:
    """A target whose repeats stopped early (`--settle`): its verdict was settled."""

    name: str = doc("target name", "")
    repeats: int = doc("measurements made before it stopped", 0)
    collapsed: int = doc("trusted repeats that collapsed", 0)
    trusted: int = doc("trusted repeats with a verdict", 0)


@dataclass
class StoryTarget:
    """One target (a registry entry of kind `story`) through the incident, once."""

    SECTION: ClassVar[str] = "story target"

    name: str = doc("target name from the registry", "")
    repeat: int = doc("which measurement of this target (1 to the run's `repeat`)", 1)
    title: str | None = doc("human title of the target")
    model: str = doc("`threads` (a fixed pool) or `gevent`", "")
    server: str = doc("the program that runs the app (uWSGI, Gunicorn, ...)", "")
    compose_file: str | None = doc("the compose file the target runs from")
    workers: int | None = doc("processes of the app")
    per_worker: int | None = doc("threads or greenlets per process, as run")
    commands: list[str] = doc("what a reader types to repeat it", factory=list)
    check: GeneratorCheck | None = doc("the generator's self-check")
    loop: str | None = doc("the generator's event loop (tokio, uvloop or asyncio)")
    steal: HostSteal | None = doc("the host's steal time while the generator ran")
    invalid_tries: list[InvalidTry] = doc(
        "earlier measurements of this target the generator's self-check marked invalid, "
        "measured again (at most story.run.MAX_TRIES in all)",
        factory=list,
    )
    generator_exit: int | None = doc("the generator's exit status")
    generator_stderr: str | None = doc("the end of what the generator printed")
    incident: Incident | None = doc("when the incident started, as sent")
    adds_up: list[str] = doc(
        "problems: every attempt counted once when sent and once when ended", factory=list
    )
    summary: StorySummary | None = doc("the figures through the incident")
    seconds: list[StorySecond] = doc("one row per second of the run", factory=list)
    prediction: PoolPrediction | None = doc(
        "a thread pool's: Little's law at the incident's delay and the story's rate"
    )
    mechanism: Mechanism | None = doc(
        "what might decide a collapse, read from this repeat before the incident and at its "
        "onset (the app's timing log joined with nginx's and slow_api's); absent: not kept",
        omit_none=True,
    )
    closed_loop: ClosedLoop | None = doc("the same incident under ab (--closed-loop)")
    closed_loop_error: str | None = doc("why the closed loop could not be measured")
    findings: list[Finding] = doc(
        "the verdicts, computed once when measured (playground.incident.held, playground.story.findings)",
        factory=list,
    )
    predicted: PredictedFigures | None = doc(
        "the model's figures for this target with the same settings (`playground predict`)",
        omit_none=True,
    )
    odds: Odds | None = doc(
        "a prediction's draws (`playground predict`): how often the target held, recovered or "
        "did not; the per-second rows and summary above are one representative draw's",
        omit_none=True,
    )
    error: str | None = doc("why the target could not be measured")
    wall_s: float | None = doc("seconds the target took, bring-up to teardown")
    outside: OutsideTarget | None = doc("with --url: the service measured by its URL")
    swarm: SwarmShape | None = doc(
        "`playground swarm`: the stack it ran on, with each sender's record", omit_none=True
    )
    extra: dict[str, Any] = doc("keys this version does not know", factory=dict)

    @classmethod
    def about(
        cls,
        target: Target,
        repeat: int = 1,
        *,
        workers: int | None = None,
        per_worker: int | None = None,
    ) -> StoryTarget:
        """A measurement of `target` about to be made (or modelled): what the registry says of
        it, its pool as run where that differs from the registry's (the model's system)."""
        return cls(
            name=target.name,
            repeat=repeat,
            title=target.title,
            model=target.model,
            server=target.server,
            compose_file=target.compose_file,
            workers=target.workers if workers is None else workers,
            per_worker=target.per_worker if per_worker is None else per_worker,
        )


@dataclass(frozen=True)
class SweepStep:
    """One offered rate of one target in the sweep."""

    rate: float = doc("offered visits per second (the setting)", 0.0)
    offered_per_s: float = doc("first attempts meant to be sent per second in the window", 0.0)
    attempts_per_s: float = doc("... with the reloads", 0.0)
    goodput_per_s: float = doc("2xx answers per second that ended in the window", 0.0)
    timeouts: int = doc("attempts that timed out in the window", 0)
    errors: int = doc("attempts that ended otherwise in the window", 0)
    visits: int = doc("visits that arrived in the window", 0)
    visits_served: float | None = doc("share of them served, reloads included")
    latency_p50_s: float | None = doc("user latency p50 from the intended send, s")
    latency_p99_s: float | None = doc("... p99, s")
    check: GeneratorCheck | None = doc("the generator's self-check for this step")
    adds_up: list[str] = doc(
        "problems: every attempt counted once when sent and once when ended", factory=list
    )
    window_s: float = doc("seconds in the measured window", 0.0)
    settled_before_s: float | None = doc(
        "seconds the servers took to drain before the step; null: still busy when the "
        "settle time ran out (the step started anyway)",
        0.0,
    )
    predicted: PredictedFigures | None = doc(
        "the model's figures for this step with the same settings (`playground predict`)",
        omit_none=True,
    )

    @property
    def valid(self) -> bool:
        return self.check is not None and self.check.valid


@dataclass
class SweepTarget:
    """One target through every rate of the sweep, on one bring-up."""

    name: str = doc("target name from the registry", "")
    title: str | None = doc("human title of the target")
    model: str = doc("`threads` or `gevent`", "")
    server: str = doc("the program that runs the app", "")
    capacity_per_s: float | None = doc(
        "a thread pool's answers per second at the sweep's delay: workers x threads / delay "
        "(Little's law); null for gevent"
    )
    commands: list[str] = doc("what a reader types to repeat it", factory=list)
    steps: list[SweepStep] = doc("one per offered rate", factory=list)
    findings: list[Finding] = doc("the verdicts, computed once when measured", factory=list)
    error: str | None = doc("why the target could not be measured")
    wall_s: float | None = doc("seconds it took")
    extra: dict[str, Any] = doc("keys this version does not know", factory=dict)


@dataclass
class Sweep:
    """Goodput against offered load (`--sweep`)."""

    settings: SweepSettings = doc("the sweep's rates and windows", factory=SweepSettings)
    targets: list[SweepTarget] = doc("one per target", factory=list)


@dataclass(frozen=True)
class PoolPrediction:
    """What Little's law predicts for a fixed pool at one upstream time and offered rate."""

    pool: int = doc("requests the pool holds at once: workers x threads", 0)
    upstream_s: float = doc("the third party's time per call, s", 0.0)
    rate: float = doc("offered visits per second", 0.0)
    capacity_per_s: float = doc("answers per second the pool can give: pool / upstream_s", 0.0)
    tipping_delay_s: float = doc(
        "the upstream time at which the rate fills the pool: pool / rate, s", 0.0
    )
    over: bool = doc("the rate is above the capacity: the backlog grows", False)
    lasts_s: float | None = doc(
        "once over: seconds until a newly arriving user waits longer than the timeout "
        "(steady state, no reloads); null when not over"
    )


@dataclass(frozen=True)
class DelayStep:
    """The whole incident once, at one of the cliff's incident delays."""

    incident_delay: float = doc("the third party's time during the incident, s", 0.0)
    held: bool | None = doc("at least held.HELD_SHARE of the visits during it served")
    recovered: bool | None = doc("back to 95% of the answers due within the run after it")
    recovery_s: float | None = doc("seconds it took, from the incident's end")
    visits_served_during: float | None = doc("share of the visits during it served")
    goodput_during: float | None = doc("2xx answers per second during it")
    predicted_lasts_s: float | None = doc(
        "Little's law: seconds from the incident's start until a new user waits past the "
        "timeout (steady state, no reloads); null where the pool is not over its capacity"
    )
    lasted_s: float | None = doc(
        "measured: seconds from the incident's start to the first second a user gave up; "
        "null: nobody did during it"
    )
    trusted: bool = doc("no error finding (the generator kept its schedule)", False)
    error: str | None = doc("why it could not be measured")
    predicted: PredictedFigures | None = doc(
        "the model's figures for this delay with the same settings (`playground predict`)",
        omit_none=True,
    )


@dataclass
class CliffTarget:
    """Where a thread pool's cliff is: Little's law's prediction, then the edge measured."""

    name: str = doc("target name from the registry", "")
    title: str | None = doc("human title of the target")
    prediction: PoolPrediction | None = doc(
        "capacity at the rate sweep's delay; the upstream time at which the story's rate fills "
        "the pool (`tipping_delay_s`)"
    )
    rates: SweepTarget | None = doc("the fine sweep of offered load at the cliff's delay")
    edge_rate: float | None = doc(
        "the lowest offered rate whose goodput fell below held.HELD_SHARE of it; null: none did"
    )
    held_rate: float | None = doc("the highest offered rate below that edge that held")
    delays: list[DelayStep] = doc("the incident at each delay, at the story's rate", factory=list)
    edge_delay: float | None = doc("the shortest incident delay at which it collapsed")
    unrecovered_delay: float | None = doc(
        "the shortest incident delay it did not recover from within the run"
    )
    findings: list[Finding] = doc("how far the prediction is from the edge", factory=list)
    error: str | None = doc("why it could not be measured")


@dataclass
class Cliff:
    """`--cliff`: the edge of each thread pool, predicted and found."""

    delay: float = doc("the third party's delay during the rate sweep, s", 2.0)
    shares: list[float] = doc(
        "offered rates of the sweep, as shares of the predicted capacity", factory=list
    )
    delays: list[float] = doc("the incident delays tried at the story's rate, s", factory=list)
    targets: list[CliffTarget] = doc("one per thread-pool target", factory=list)


@dataclass(frozen=True)
class CrossCheck:
    """The same open-loop load from the playground's generator and from oha, compared."""

    target: str = doc("target name from the registry", "")
    rate: float = doc("requests per second offered by both (constant arrivals)", 0.0)
    openloop: ToolFigures | None = doc("what openloop.py --no-refresh measured")
    oha: ToolFigures | None = doc("what oha -q RATE --latency-correction measured")
    differences: list[str] = doc(
        "where they disagree by more than the tolerance (empty: they agree)", factory=list
    )
    commands: list[str] = doc("what a reader types to repeat it", factory=list)
    error: str | None = doc("why it could not be measured")


@dataclass(frozen=True)
class FigureSpread:
    """One headline figure over a target's trusted repeats."""

    name: str = doc("the StorySummary field", "")
    median: float | None = doc("median over the trusted repeats")
    min: float | None = doc("the smallest")
    max: float | None = doc("the largest")
    values: list[float | None] = doc("each trusted repeat's, in order", factory=list)


@dataclass(frozen=True)
class RecoveryTimes:
    """Time to recover over a target's trusted repeats, a repeat that did not recover within
    the run counted as censored at the run's after-phase (`story.after_s`), not left out."""

    repeats: int = doc("trusted repeats with a time to recover or none", 0)
    recovered: int = doc("... of them that recovered within the run", 0)
    censored_at_s: float = doc(
        "the run's after-phase, s: a repeat that did not recover took longer than this", 0.0
    )
    median_s: float | None = doc(
        "the Kaplan-Meier median (playground.core.survival), s; null: fewer than half recovered, "
        "the median is over `censored_at_s`"
    )
    min_s: float | None = doc("the quickest recovery, s; null: none recovered")
    max_s: float | None = doc(
        "the slowest recovery within the run, s (over `censored_at_s` where `recovered` is "
        "below `repeats`)"
    )


#: What TargetSpread.outcomes holds for a trusted repeat with no visits during the incident.
NO_OUTCOME = "-"


@dataclass
class TargetSpread:
    """A target's repeats (`--repeat`) side by side: the headline figures' median and
    min-max, how often each verdict came out (k of n) and the time to recover."""

    name: str = doc("target name from the registry", "")
    repeats: int = doc("measurements made", 0)
    trusted: int = doc("... whose figures can be trusted (no error finding)", 0)
    verdicts: list[str] = doc(
        "each trusted repeat's verdict: `held`, `collapsed` or `-`", factory=list
    )
    outcomes: list[str] = doc(
        "each trusted repeat's verdict in three (playground.incident.held.outcome): "
        "`held`, `collapsed` (and recovered within the run), `collapsed and did not recover`, "
        "or `-` (no visits during the incident)",
        factory=list,
    )
    recovery: RecoveryTimes | None = doc("time to recover over the trusted repeats")
    figures: list[FigureSpread] = doc("the headline figures", factory=list)
    findings: list[Finding] = doc(
        "e.g. `verdict-split`: held in k of n repeats, collapsed in the rest", factory=list
    )

    def figure(self, name: str) -> FigureSpread | None:
        return next((f for f in self.figures if f.name == name), None)

    def frequency(self, *outcomes: str) -> Frequency | None:
        """How many of the trusted repeats with a verdict came out as one of `outcomes`, of
        them all; None where none has a verdict."""
        judged = [o for o in self.outcomes if o != NO_OUTCOME]
        return Frequency(sum(o in outcomes for o in judged), len(judged)) if judged else None


@dataclass(frozen=True)
class StoryHeaderSettings:
    """A story run's header `settings`: always empty, the story's own are `story` (and
    `sweep.settings`); keys a later version writes here are kept."""

    extra: dict[str, Any] = doc("keys this version does not know", factory=dict)


@dataclass
class StoryRun(RunHeader):
    """One `playground story`: its header, its settings and what each target did."""

    KIND: ClassVar[str] = "story"

    settings: StoryHeaderSettings = doc(
        "empty: a story's settings are `story`", factory=StoryHeaderSettings
    )
    kind: str = doc(
        "`story`; `predict`: a prediction by the model of the incident (`playground predict`), "
        "not a measurement; `swarm`: measured on a Swarm stack (`playground swarm`)",
        "story",
    )
    story: StorySettings = doc("the incident and its users", factory=StorySettings)
    repeat: int = doc("measurements per target, each on a fresh bring-up (`--repeat`)", 1)
    settle: int | None = doc(
        "`--settle M`: a target stopped repeating once at least M trusted repeats put the 95 % "
        "interval of its collapses wholly above or below a half (`repeat` the most)",
        omit_none=True,
    )
    settled: list[Settled] | None = doc(
        "the targets that stopped early (`--settle`), and why", omit_none=True
    )
    targets: list[StoryTarget] = doc(
        "one per target and repeat through the incident, in the order measured", factory=list
    )
    spreads: list[TargetSpread] = doc(
        "with more than one repeat: per target, the spread of its headline figures", factory=list
    )
    crosschecks: list[CrossCheck] = doc(
        "with --cross-check: the generator against oha on the same loads", factory=list
    )
    cliff: Cliff | None = doc("with --cliff: each thread pool's edge, predicted and found")
    sweep: Sweep | None = doc("goodput against offered load, with --sweep")
    odds_map: OddsMap | None = doc(
        "`playground predict TARGET --map`: P(collapse) over arrival rate and incident delay",
        omit_none=True,
    )

    @classmethod
    def from_json(cls, data: Any, *, where: str = "results") -> StoryRun:
        if not isinstance(data, dict):
            raise ModelError(f"{where}: expected a JSON object, got {type(data).__name__}")
        known = data.get("kind") in ("story", "predict", "swarm")
        if data.get("schema_version") != SCHEMA_VERSION or not known:
            raise ModelError(
                f"{where}: not a story run of schema {SCHEMA_VERSION} "
                f"(schema_version {data.get('schema_version')!r}, kind {data.get('kind')!r})"
            )
        try:
            run: StoryRun = jsonmodel.from_json(cls, data, where)
        except StoryError as exc:
            raise ModelError(f"{where}: {exc}") from None
        return run

    @property
    def predicted(self) -> bool:
        """A prediction by the model of the incident, not a measurement."""
        return self.kind == "predict"

    def target(self, name: str) -> StoryTarget | None:
        """The target's first measurement (see `spread` for all of them)."""
        return next((t for t in self.targets if t.name == name), None)

    def spread(self, name: str) -> TargetSpread | None:
        return next((s for s in self.spreads if s.name == name), None)

    def rate_sweeps(self) -> list[tuple[SweepTarget, SweepSettings]]:
        """Every measured rate sweep with its settings: the sweep's, and each cliff target's
        (the cliff's delay, the sweep's default windows, as the cliff measures them)."""
        out = [(m, self.sweep.settings) for m in self.sweep.targets] if self.sweep else []
        if self.cliff is not None:
            at = SweepSettings(delay=self.cliff.delay)
            out += [(c.rates, at) for c in self.cliff.targets if c.rates is not None]
        return out

    def missing_prediction(self) -> bool:
        """A measured row without the model's figures beside it (a run measured before they
        were stored): only such a run needs the model to redraw its report."""
        if self.predicted:
            return False
        return (
            any(t.summary and t.predicted is None for t in self.targets)
            or any(st.predicted is None for m, _ in self.rate_sweeps() for st in m.steps)
            or any(
                d.predicted is None and d.error is None and d.visits_served_during is not None
                for c in (self.cliff.targets if self.cliff else [])
                for d in c.delays
            )
        )


SCHEMA_CLASSES: tuple[tuple[type, str], ...] = (
    (StoryRun, "StoryRun (the whole file of a `playground story` run)"),
    (StorySettings, "StorySettings (`story`)"),
    (MeasuredSplit, "MeasuredSplit (each of `story.shares_from`, a prediction's)"),
    (StoryTarget, "StoryTarget (each of `targets`)"),
    (Settled, "Settled (each of `settled`)"),
    (GeneratorCheck, "GeneratorCheck (`check`)"),
    (HostSteal, "HostSteal (`steal`)"),
    (Mechanism, "Mechanism (`mechanism`)"),
    (InvalidTry, "InvalidTry (each of `invalid_tries`)"),
    (Incident, "Incident (`incident`)"),
    (StorySummary, "StorySummary (`summary`)"),
    (PredictedFigures, "PredictedFigures (each `predicted`)"),
    (StorySecond, "StorySecond (each of `seconds`)"),
    (OutsideTarget, "OutsideTarget (`outside`)"),
    (SwarmShape, "SwarmShape (`swarm`)"),
    (SenderRecord, "SenderRecord (each of `swarm.senders`)"),
    (NodeLost, "NodeLost (`swarm.lost`)"),
    (IncidentCommand, "IncidentCommand (each of `outside.commands`)"),
    (ClosedLoop, "ClosedLoop (`closed_loop`)"),
    (AbPhase, "AbPhase (each of `closed_loop.phases`)"),
    (Sweep, "Sweep (`sweep`)"),
    (SweepSettings, "SweepSettings (`sweep.settings`)"),
    (SweepTarget, "SweepTarget (each of `sweep.targets`)"),
    (SweepStep, "SweepStep (each of `sweep.targets[].steps`)"),
    (TargetSpread, "TargetSpread (each of `spreads`)"),
    (CrossCheck, "CrossCheck (each of `crosschecks`)"),
    (Cliff, "Cliff (`cliff`)"),
    (CliffTarget, "CliffTarget (each of `cliff.targets`)"),
    (PoolPrediction, "PoolPrediction (`cliff.targets[].prediction`)"),
    (DelayStep, "DelayStep (each of `cliff.targets[].delays`)"),
    (ToolFigures, "ToolFigures (`crosschecks[].openloop`, `crosschecks[].oha`)"),
    (FigureSpread, "FigureSpread (each of `spreads[].figures`)"),
    (RecoveryTimes, "RecoveryTimes (`spreads[].recovery`)"),
    (Odds, "Odds (`targets[].odds`)"),
    (Draw, "Draw (each of `targets[].odds.draws`)"),
    (OddsMap, "OddsMap (`odds_map`)"),
    (MapCell, "MapCell (each of `odds_map.cells`)"),
    (MapPoint, "MapPoint (each of `odds_map.measured`)"),
)


#: The schema page's lines before this kind's tables.
SCHEMA_INTRO: tuple[str, ...] = (
    "# A story run (`playground story`)",
    "",
    "The same file, `results/<run-id>/results.json`, with `kind` `story`: the header",
    "above (`settings` is empty: the story's are `story`), then the incident's",
    "settings, one entry per target and the sweep (`src/playground/incident/storyresults.py`,",
    "its settings in `incident/settings.py`, what each target records in `incident/targetresults.py`).",
    "",
)

"""The model scored where a pool tips: each setting's measured k of n beside the model's P,
and the Brier score beside the references, all read from records (docs/runs/).

A scored setting names the story runs whose repeats it counts and the prediction run whose
draws give the model's P(collapse) (collapsed or not recovered, over its draws). A repeat
counts as collapsed under held.HELD_SHARE of the visits during the incident served, and only
if its generator kept its schedule. Beside the model stand five references
(:mod:`playground.incident.scoring`): a coin (always a half), always the majority outcome,
Little's law alone, the base rate (every setting given the share of collapses over all the
scored repeats) and the floor (each setting given its own measured frequency: no forecast
that gives one probability per setting scores lower).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from playground.core.odds import Frequency
from playground.core.records import RECORDS_DIR, RecordError
from playground.incident import held, predictrecord, runrecords, scoring
from playground.incident.predictrecord import PredictedTarget, PredictRecord
from playground.incident.runrecords import RunRecord, TargetRecord

T = TypeVar("T")

#: The page's target: the model's P within this of the measured frequency at every setting.
TARGET = 0.15


@dataclass(frozen=True)
class ScoredSetting:
    """One setting the page scores: what was measured, where, and the model's run."""

    label: str
    target: str  # as the records name it, a remedy included: `gunicorn-threads+deadline`
    pool: int | None  # workers x threads; None: no fixed pool
    rate: float
    incident_delay: float
    measured: tuple[str, ...]  # the story runs whose repeats count
    model: str  # the prediction run whose draws give P


def trusted(setting: ScoredSetting, records: Sequence[RunRecord]) -> list[TargetRecord]:
    """The setting's repeats whose generator kept its schedule, over every run it names."""
    by_id = {r.run_id: r for r in records}
    found = []
    for run_id in setting.measured:
        if run_id not in by_id:
            raise RecordError(f"{setting.label}: no record of run {run_id} in docs/runs/")
        found += [
            t
            for t in by_id[run_id].targets
            if t.name == setting.target and t.valid and t.visits_served_during is not None
        ]
    if not found:
        raise RecordError(f"{setting.label}: its runs hold no trusted repeat of {setting.target}")
    return found


def measured(setting: ScoredSetting, records: Sequence[RunRecord]) -> Frequency:
    """The setting's collapses over the trusted repeats of its runs."""
    outcomes = [
        not held.served_enough(t.visits_served_during or 0.0) for t in trusted(setting, records)
    ]
    return Frequency(sum(outcomes), len(outcomes))


def model_odds(setting: ScoredSetting, predictions: Sequence[PredictRecord]) -> PredictedTarget:
    """The setting's target in its prediction run, with its draws; refused where the
    prediction drew its shares from a run the setting counts (fit and score never share one)."""
    runs = [p for p in predictions if p.run_id == setting.model]
    found = [t for p in runs for t in p.targets if t.name == setting.target and t.draws]
    if len(found) != 1:
        raise RecordError(f"{setting.label}: run {setting.model} has no odds for {setting.target}")
    if shared := set(split_runs(runs[0])) & set(setting.measured):
        raise RecordError(
            f"{setting.label}: run {setting.model} drew its shares from {', '.join(shared)}, "
            "which it is scored on"
        )
    return found[0]


def split_runs(prediction: PredictRecord) -> list[str]:
    """The runs a prediction drew its busiest shares from (`playground predict --shares-from`);
    none where it drew the model's fit runs'."""
    return [split["run"] for split in prediction.settings.get("shares_from", [])]


def model_draws(setting: ScoredSetting, predictions: Sequence[PredictRecord]) -> Frequency:
    """The model at the setting: its prediction run's draws that collapsed (recovered or not)
    of all its draws. Its interval covers the draws only, not the model's error."""
    t = model_odds(setting, predictions)
    return Frequency((t.collapsed or 0) + (t.not_recovered or 0), t.draws or 1)


@dataclass(frozen=True)
class Point:
    """One scored setting, read: the repeats measured and the model's draws."""

    setting: scoring.Setting
    draws: Frequency

    @property
    def p(self) -> float:
        return self.draws.share

    @property
    def off(self) -> float:
        """The model's P less the measured frequency."""
        return self.p - self.setting.collapsed.share


def points(
    settings: Sequence[ScoredSetting],
    records: Sequence[RunRecord],
    predictions: Sequence[PredictRecord],
) -> list[Point]:
    return [
        Point(
            setting=scoring.Setting(
                label=s.label,
                target=s.target,
                rate=s.rate,
                incident_delay=s.incident_delay,
                pool=s.pool,
                collapsed=measured(s, records),
            ),
            draws=model_draws(s, predictions),
        )
        for s in settings
    ]


def _interval(f: Frequency) -> str:
    low, high = f.interval
    return f"{low:.2f}-{high:.2f}"


def scores(scored: Sequence[Point]) -> list[tuple[str, float]]:
    """The Brier score of the model and of each of the five references, in that order."""
    p = {x.setting.label: x.p for x in scored}
    settings = [x.setting for x in scored]
    k = sum(s.collapsed.k for s in settings)
    n = sum(s.collapsed.n for s in settings)
    forecasters: tuple[tuple[str, scoring.Forecast], ...] = (
        ("the model", lambda s: p[s.label]),
        ("a coin: always a half", lambda s: 0.5),
        ("always the majority outcome", scoring.majority(settings)),
        ("Little's law alone", scoring.little),
        ("the base rate of these repeats", lambda s: k / n),
        ("the floor: each setting's own frequency", lambda s: s.collapsed.share),
    )
    return [(name, scoring.brier(settings=settings, forecast=f)) for name, f in forecasters]


def tables(
    settings: Sequence[ScoredSetting],
    records: Sequence[RunRecord],
    predictions: Sequence[PredictRecord],
    *,
    rival: tuple[str, Sequence[ScoredSetting]] | None = None,
) -> list[str]:
    """The Brier scores of the model and the five references, then each setting's row;
    `rival`: another forecaster of the same repeats, its name and its settings (the same runs
    measured, another prediction run), scored beside the model."""
    scored = points(settings, records, predictions)
    ranked = scores(scored)
    if rival is not None:
        name, theirs = rival
        other = points(theirs, records, predictions)
        if [x.setting.collapsed for x in other] != [x.setting.collapsed for x in scored]:
            raise RecordError(f"{name}: not scored on the same repeats as the model")
        ranked.insert(1, (name, scores(other)[0][1]))
    lines = scoring.brier_table(ranked, sum(x.setting.collapsed.n for x in scored))
    return [*lines, "", *rows(scored)]


def rows(scored: Sequence[Point]) -> list[str]:
    """Each setting's row: measured k of n, the model's P with its draws' interval, how far
    off, and Little's law's verdict."""
    lines = [
        "| setting | collapsed, measured | the model's P(collapse) (its draws' 95 %) | off by "
        "| Little's law |",
        "|---|---|---|---|---|",
    ]
    for x in scored:
        s = x.setting
        little = "collapses" if scoring.little(s) else "holds"
        lines.append(
            f"| {s.label} | {s.collapsed.text()} | {x.p:.2f} ({_interval(x.draws)}) "
            f"| {x.off:+.2f} | {little} |"
        )
    return lines


def summary(scored: Sequence[Point], *, lead: str = "Scored at") -> list[str]:
    """The score in a few sentences for the page's first screen: the miss against the target
    and the Brier score against the best reference, each said as met or missed (`lead`: the
    first words, which say which forecaster)."""
    (_, model), *references = scores(scored)
    best_name, best = min(references[:-1], key=lambda r: r[1])
    floor = references[-1][1]
    missed = [x.setting.label for x in scored if abs(x.off) > TARGET]
    worst = max(abs(x.off) for x in scored)
    n = sum(x.setting.collapsed.n for x in scored)
    lines = [
        f"{lead} {len(scored)} settings ({n} repeats measured after the model's commit), "
        f"its P(collapse) is within {worst:.2f} of the measured frequency: "
        + (
            f"the target, {TARGET:.2f}, is met at every one."
            if not missed
            else f"the target, {TARGET:.2f}, is missed at {', '.join(missed)}."
        ),
        f"Its Brier score is {model:.3f}; the best reference, {best_name}, scores {best:.3f}"
        f" and the floor {floor:.3f}: "
        + (
            "it beats the best reference"
            if model <= best
            else "it does not beat the best reference"
        )
        + (
            ", and is within 0.05 of the floor."
            if model <= floor + 0.05
            else f", and is {model - floor:.3f} above the floor."
        ),
    ]
    return lines


def at_hand(
    score: Callable[
        [Sequence[ScoredSetting], Sequence[RunRecord], Sequence[PredictRecord]], list[T]
    ],
    directory: Path = RECORDS_DIR,
    *,
    split: bool = False,
) -> list[T]:
    """`score` over :data:`SCORED` (`split`: :data:`SPLIT_SCORED`) and the records in
    `directory`; empty where they are not at hand (an install outside the repository) or a
    scored run has no record."""
    settings = SPLIT_SCORED if split else SCORED
    try:
        return score(settings, runrecords.load_all(directory), predictrecord.load_all(directory))
    except (OSError, RecordError):
        return []


def error_lines(target: str, *, directory: Path = RECORDS_DIR, split: bool = False) -> list[str]:
    """The model's error as scored for `target`, for the `predict` command's output: at each
    scored setting of that target, the model's P(collapse) beside the measured frequency and
    how far off it was; then the Brier score over every scored setting. `split`: the model
    drawing its machine's own split (`--shares-from`), scored at :data:`SPLIT_SCORED`. Empty
    where the records are not at hand (an install outside the repository) or no setting of
    `target` is scored."""
    scored = at_hand(points, directory, split=split)
    mine = [x for x in scored if x.setting.target == target]
    if not mine:
        return []
    (_, model), (_, coin), *_ = scores(scored)
    page = f"{directory.parent.name}/predict.md"
    lines = [
        f"with its machine's split, scored on repeats after its fit ({page}):"
        if split
        else f"scored on repeats measured after the model's fit ({page}):"
    ]
    lines += [
        f"{x.setting.label.removeprefix(target + ' ')}: P {x.p:.2f}, "
        f"{x.setting.collapsed.text()} collapsed, off {x.off:+.2f}"
        for x in mine
    ]
    lines.append(
        f"Brier score at all {len(scored)} scored settings {model:.3f} (a coin's {coin:.3f})"
    )
    return lines


#: The settings docs/predict.md scores ("Scored where a pool tips"): repeats measured after the
#: model's commit, alone on the machine, and the model's 96 draws at each
#: (`.venv/bin/playground predict TARGET --incident-delay D --json`).
def _scored(
    target: str, shape: tuple[int, int], delay: float, measured: str | tuple[str, ...], model: str
) -> ScoredSetting:
    """One row of :data:`SCORED` or :data:`EARLIER`: the story's 60 visits/s, the pool `shape` (workers,
    threads), the third party's `delay` in the incident, the story run or runs whose repeats
    count, and the model's run."""
    workers, threads = shape
    return ScoredSetting(
        label=f"{target} {workers} x {threads} at {delay:g} s",
        target=target,
        pool=workers * threads,
        rate=60.0,
        incident_delay=delay,
        measured=(measured,) if isinstance(measured, str) else measured,
        model=model,
    )


#: The settings measured before Docker's health checks entered the model
#: (:mod:`playground.predict.healthchecks`), which changed every draw of every target: the
#: page sets the model's P now beside what they measured, and does not score it on them. Each
#: was measured after the model's commit of its day: behind nginx, gthread's after the busy
#: time per answer entered the model; uWSGI's after a thread's time per request did; behind
#: HAProxy after a worker with a free thread took the next connection and a thread held each
#: request for its measured time; one worker as it was.
EARLIER = tuple(
    _scored(*row)
    for row in (
        # gthread behind nginx, measured after the busy time per answer entered the model:
        # runs GX, HI and GY.
        ("gunicorn-threads", (2, 64), 1.7, "20261204-020119-story", "20261204-215827-predict"),
        ("gunicorn-threads", (2, 64), 1.8, "20261204-052052-story", "20261204-215841-predict"),
        ("gunicorn-threads", (2, 64), 2.0, "20261204-022626-story", "20261204-215856-predict"),
        # uWSGI's pool, measured after a thread's time per request entered the model: runs
        # HQ, HP and HR.
        ("uwsgi-threads", (2, 64), 2.25, "20261204-111011-story", "20261204-215917-predict"),
        ("uwsgi-threads", (2, 64), 2.28, "20261204-104508-story", "20261204-215929-predict"),
        ("uwsgi-threads", (2, 64), 2.3, "20261204-113518-story", "20261204-215941-predict"),
        # `deadline` behind nginx, measured after it too: runs HH and HK at 1.7 s and 1.8 s,
        # runs HC and HJ at 2 s.
        (
            "gunicorn-threads+deadline",
            (2, 64),
            1.7,
            "20261204-045551-story",
            "20261204-215954-predict",
        ),
        (
            "gunicorn-threads+deadline",
            (2, 64),
            1.8,
            "20261204-055413-story",
            "20261204-220006-predict",
        ),
        (
            "gunicorn-threads+deadline",
            (2, 64),
            2.0,
            ("20261204-033712-story", "20261204-054549-story"),
            "20261204-220019-predict",
        ),
        (
            "gunicorn-threads+one-worker",
            (1, 128),
            2.0,
            "20261128-214012-story",
            "20261204-220033-predict",
        ),
        # Behind HAProxy a thread holds each request for its measured time in the model
        # (measured.TURN_FIT_RUNS), which changed every draw there: only repeats measured
        # after that change score it (runs IA, IB and IF).
        (
            "gunicorn-threads+haproxy",
            (2, 64),
            2.2,
            "20261204-170243-story",
            "20261204-220044-predict",
        ),
        (
            "gunicorn-threads+haproxy",
            (2, 64),
            2.25,
            "20261204-173007-story",
            "20261204-220056-predict",
        ),
        (
            "gunicorn-threads+haproxy",
            (2, 64),
            2.3,
            "20261204-175913-story",
            "20261204-220110-predict",
        ),
    )
)

#: The settings the page scores: repeats measured after Docker's health checks entered the
#: model (:mod:`playground.predict.healthchecks`), each with its story run and the model's
#: draws there (run labels as docs/predict.md's runs table gives them).
SCORED = tuple(
    _scored(*row)
    for row in (
        # uWSGI's pool about its step: runs II and IH; the model's draws runs IM and IN.
        ("uwsgi-threads", (2, 64), 2.25, "20261204-213332-story", "20261204-215917-predict"),
        ("uwsgi-threads", (2, 64), 2.28, "20261204-210832-story", "20261204-215929-predict"),
        # gthread behind nginx below where its repeats split, run JF (the model's draws run
        # JE); where they split, runs IX and JC on two machines of the same kind, and past
        # it, run JA (the model's draws runs IJ and IK).
        ("gunicorn-threads", (2, 64), 1.5, "20261205-071547-story", "20261205-062214-predict"),
        (
            "gunicorn-threads",
            (2, 64),
            1.6,
            ("20261205-035538-story", "20261205-062228-story"),
            "20261205-035529-predict",
        ),
        (
            "gunicorn-threads",
            (2, 64),
            1.7,
            ("20261204-220225-story", "20261205-030154-story"),
            "20261204-215827-predict",
        ),
        ("gunicorn-threads", (2, 64), 1.8, "20261205-003915-story", "20261204-215841-predict"),
        # A remedy on either side of its step: gthread behind HAProxy, runs IY and IZ at 2.2 s
        # and 2.25 s; the model's draws runs IT and IU.
        (
            "gunicorn-threads+haproxy",
            (2, 64),
            2.2,
            "20261204-234452-story",
            "20261204-220044-predict",
        ),
        (
            "gunicorn-threads+haproxy",
            (2, 64),
            2.25,
            "20261205-001203-story",
            "20261204-220056-predict",
        ),
        # `deadline` about gthread's edge: runs JY, JD and JB at 1.6 s, 1.7 s and 1.8 s; the
        # model's draws runs JW, IP and IQ.
        (
            "gunicorn-threads+deadline",
            (2, 64),
            1.6,
            "20261205-065117-story",
            "20261205-062221-predict",
        ),
        (
            "gunicorn-threads+deadline",
            (2, 64),
            1.7,
            "20261205-032945-story",
            "20261204-215954-predict",
        ),
        (
            "gunicorn-threads+deadline",
            (2, 64),
            1.8,
            "20261205-010620-story",
            "20261204-220006-predict",
        ),
    )
)

#: The settings the model is scored at drawing the split of the machine it forecasts
#: (`playground predict --shares-from RUN`): on one machine, a story run of gthread first
#: (run JR, `.venv/bin/playground story gunicorn-threads --incident-delay 1.2 --repeat 5
#: --no-build -q`, which gave the shares), then the model's 96 draws at each setting from those
#: shares (`.venv/bin/playground predict TARGET --incident-delay D --shares-from RUN --jobs 2`),
#: then fifteen repeats at each, alone on the machine: runs JZ, JX and JY at gthread's 1.5 s
#: and 1.6 s and `deadline`'s 1.6 s; the model's draws runs JS, JT and JU.
SPLIT_SCORED = tuple(
    _scored(*row)
    for row in (
        ("gunicorn-threads", (2, 64), 1.5, "20261205-071547-story", "20261205-062122-predict"),
        ("gunicorn-threads", (2, 64), 1.6, "20261205-062228-story", "20261205-062130-predict"),
        (
            "gunicorn-threads+deadline",
            (2, 64),
            1.6,
            "20261205-065117-story",
            "20261205-062149-predict",
        ),
    )
)

#: The same repeats as :data:`SPLIT_SCORED`, each with the model's draws from the fit run's
#: split there, drawn before them (runs JV, JE and JW): the prediction :data:`SCORED` scores at
#: the same target and delay, the model as it forecasts without `--shares-from`.
SPLIT_RIVAL = tuple(
    replace(
        s,
        model=next(
            o.model for o in SCORED if (o.target, o.incident_delay) == (s.target, s.incident_delay)
        ),
    )
    for s in SPLIT_SCORED
)

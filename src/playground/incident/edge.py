"""What decides a collapse where a pool tips, from the repeats' records: each candidate alone.

A setting at a pool's edge is measured many times (the same schedule, the same settings), and
its repeats split between held and collapsed (under held.HELD_SHARE of the visits during the
incident served). Each repeat's record keeps its candidates
(:class:`~playground.incident.mechanism.Mechanism`); for each candidate alone, the area under
its ROC curve (AUC) says how well it orders the repeats: the chance that a repeat that
collapsed had a higher value than one that held (ties count a half). Every candidate is read
in the direction declared before measuring, "higher means closer to a collapse", so an AUC
well below a half is a candidate that works the other way, and one near a half predicts
nothing. Its 95 % interval is Hanley and McNeil's ("The meaning and use of the area under a
receiver operating characteristic (ROC) curve", Radiology 1982), which widens as either side
has fewer repeats (at an AUC of 0 or 1, where it would vanish, taken half a pair inside); a
candidate predicts where the interval lies wholly above a half.

    .venv/bin/python -m playground.predict.validation --write   # writes the page's table
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from playground.core.odds import Z95, Frequency
from playground.incident import held
from playground.incident.mechanism import MODEL_FIGURES, Mechanism
from playground.incident.runrecords import RunRecord, TargetRecord


@dataclass(frozen=True)
class Auc:
    """A candidate's AUC over one setting's repeats, with its 95 % interval."""

    value: float
    low: float
    high: float
    collapsed: int
    held: int

    def predicts(self) -> bool:
        return self.low > 0.5

    def text(self) -> str:
        return f"{self.value:.2f} ({self.low:.2f}-{self.high:.2f})"


def auc(values: Sequence[float], outcomes: Sequence[bool]) -> Auc | None:
    """The AUC of `values` for `outcomes` (True: collapsed), higher meaning collapsed; None
    without a repeat on each side."""
    pos = [v for v, o in zip(values, outcomes, strict=True) if o]
    neg = [v for v, o in zip(values, outcomes, strict=True) if not o]
    if not pos or not neg:
        return None
    pairs = len(pos) * len(neg)
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    a = wins / pairs
    # At 0 or 1 Hanley and McNeil's variance vanishes; it is taken half a pair inside, so that
    # a perfect split of a few repeats does not read as certain.
    v = min(max(a, 0.5 / pairs), 1 - 0.5 / pairs)
    q1, q2 = v / (2 - v), 2 * v * v / (1 + v)
    var = (v * (1 - v) + (len(pos) - 1) * (q1 - v * v) + (len(neg) - 1) * (q2 - v * v)) / pairs
    half = Z95 * math.sqrt(max(var, 0.0))
    return Auc(a, max(0.0, a - half), min(1.0, a + half), len(pos), len(neg))


def _ranks(values: Sequence[float]) -> list[float]:
    """Each value's rank from 1, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float] | None:
    """Spearman's rank correlation with its 95 % interval (Fisher's z with Fieller, Hartley and
    Pearson's standard error, 1.03 / sqrt(n - 3)); None under four pairs or with no spread."""
    n = len(xs)
    if n < 4:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    r = sxy / math.sqrt(sxx * syy)
    z, half = math.atanh(max(-0.999999, min(0.999999, r))), Z95 * 1.03 / math.sqrt(n - 3)
    return r, math.tanh(z - half), math.tanh(z + half)


@dataclass(frozen=True)
class Repeat:
    """One trusted repeat at a setting: its run, and its record."""

    run_id: str
    target: TargetRecord

    @property
    def collapsed(self) -> bool:
        served = self.target.visits_served_during
        return served is not None and not held.served_enough(served)


def repeats(
    records: Sequence[RunRecord],
    *,
    target: str,
    incident_delay: float,
    runs: Sequence[str] | None = None,
) -> list[Repeat]:
    """Every repeat of `target` at `incident_delay` (the story's other settings as they are by
    default) that kept its schedule and has its candidates, in the order measured; only those
    of `runs` where it names them."""
    found = []
    for r in records:
        if runs is not None and r.run_id not in runs:
            continue
        s = r.story_settings()
        extra = {k for k in r.settings if k != "incident_delay"}
        if extra or not math.isclose(s.incident_delay, incident_delay):
            continue
        found += [
            Repeat(r.run_id, t)
            for t in r.targets
            if t.name == target and t.valid and t.mechanism is not None
        ]
    return found


#: The candidates in the page's order, each with what it reads in a word.
CANDIDATES = tuple(f.name for f in fields(Mechanism) if f.name not in MODEL_FIGURES)


def rows(found: Sequence[Repeat]) -> list[tuple[str, Auc | None, str, str, str]]:
    """Per candidate: its AUC, its median over the repeats that held and that collapsed, and
    its rank correlation with the share of the visits served during the incident."""
    out = []
    for name in CANDIDATES:
        seen = [
            (v, r.collapsed, r.target.visits_served_during)
            for r in found
            if (v := getattr(r.target.mechanism, name)) is not None
        ]
        a = auc([v for v, _, _ in seen], [c for _, c, _ in seen]) if seen else None
        paired = [(v, s) for v, _, s in seen if s is not None]
        rho = spearman([v for v, _ in paired], [s for _, s in paired])
        out.append(
            (
                name,
                a,
                _median([v for v, c, _ in seen if not c]),
                _median([v for v, c, _ in seen if c]),
                "-" if rho is None else f"{rho[0]:+.2f} ({rho[1]:+.2f} to {rho[2]:+.2f})",
            )
        )
    return out


def _median(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    mid = len(ordered) // 2
    m = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return f"{m:.3g}"


def table(found: Sequence[Repeat], *, label: str) -> list[str]:
    """One setting's table: the base rate, then each candidate's AUC and rank correlation
    with the visits served beside its medians."""
    k = sum(r.collapsed for r in found)
    lines = [
        f"{label}: collapsed in {Frequency(k, len(found)).text()} repeats.",
        "",
        "| candidate | median, held | median, collapsed | AUC (95 % interval) | predicts "
        "| Spearman with visits served (95 % interval) |",
        "|---|---|---|---|---|---|",
    ]
    for name, a, lo, hi, rho in rows(found):
        verdict = "-" if a is None else "yes" if a.predicts() else "no"
        auc_text = "-" if a is None else a.text()
        lines.append(f"| `{name}` | {lo} | {hi} | {auc_text} | {verdict} | {rho} |")
    return lines


@dataclass(frozen=True)
class EdgeSetting:
    """A setting at a pool's edge whose repeats the page tabulates, its table's name, and the
    runs whose repeats it counts (the page names them)."""

    table: str
    target: str
    incident_delay: float
    label: str
    runs: tuple[str, ...]

    def repeats(self, records: Sequence[RunRecord]) -> list[Repeat]:
        return repeats(
            records, target=self.target, incident_delay=self.incident_delay, runs=self.runs
        )


def _at(table: str, target: str, delay: float, *runs: str) -> EdgeSetting:
    return EdgeSetting(table, target, delay, f"{target} 2 x 64 at {delay:g} s", runs)


#: The settings docs/predict.md tabulates ("What decides a collapse"), the story's defaults
#: otherwise (60 visits/s, 2 x 64 threads, users who wait 4 s and reload twice), each with
#: the runs the page names (EG and EH; EU; ES; FM; FI; FJ).
EDGE_SETTINGS = (
    _at(
        "mechanism-gthread",
        "gunicorn-threads",
        2.0,
        "20261128-135224-story",
        "20261128-170208-story",
    ),
    _at("mechanism-uwsgi", "uwsgi-threads", 2.2, "20261128-142802-story"),
    _at("mechanism-gthread-1.7", "gunicorn-threads", 1.7, "20261128-151053-story"),
    _at("mechanism-gthread-1.74", "gunicorn-threads", 1.74, "20261129-083747-story"),
    _at("mechanism-gthread-1.8", "gunicorn-threads", 1.8, "20261129-044232-story"),
    _at("mechanism-uwsgi-2.25", "uwsgi-threads", 2.25, "20261129-051012-story"),
)


def page_tables(records: Sequence[RunRecord]) -> dict[str, list[str]]:
    """Each edge setting's table, by its name, from every record that has its repeats."""
    out = {}
    for s in EDGE_SETTINGS:
        found = s.repeats(records)
        out[s.table] = table(found, label=s.label) if found else [f"{s.label}: no repeats."]
    return out


def share_predicts(records: Sequence[RunRecord]) -> bool:
    """Whether the measured repeats back a rule on the busiest worker's share: at gthread's
    edge (the first of :data:`EDGE_SETTINGS`), the share of the requests each worker began
    before the incident orders held from collapsed, its AUC's interval wholly above a half."""
    found = EDGE_SETTINGS[0].repeats(records)
    values = [
        (r.target.mechanism.busiest_share_begun_before, r.collapsed)
        for r in found
        if r.target.mechanism
    ]
    seen = [(v, c) for v, c in values if v is not None]
    a = auc([v for v, _ in seen], [c for _, c in seen]) if seen else None
    return a is not None and a.predicts()

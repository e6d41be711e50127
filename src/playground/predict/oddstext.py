"""How `playground predict` says a target's odds: P(collapse) first with the model's scored
error, the other outcomes, the report's one draw, and the same as one JSON document."""

from __future__ import annotations

from typing import Any

from playground.core import jsonmodel
from playground.core.notation import num, percent
from playground.core.odds import Frequency
from playground.incident import edgescore, held, recoveryscore
from playground.incident.oddsresults import Odds, recovery_text, share_range, threshold_text
from playground.incident.storyresults import StoryRun, StoryTarget

#: What the command can say of the model's error near the edge: the page scores it
#: (docs/predict.md, "Scored where a pool tips") on repeats measured after the model's commit.
SCORED_TEXT = "docs/predict.md scores its error where a pool tips"


def odds_lines(name: str, o: Odds, *, share_rule: bool = True) -> list[str]:
    """A target's probabilities, P(collapse) first, each line under 80 columns; the busiest
    share's rule only where `share_rule` (measured repeats back it: `edge.share_predicts`)."""
    n = len(o.draws)
    collapsed = o.frequency(held.COLLAPSED).k + o.frequency(held.NOT_RECOVERED).k
    p = Frequency(collapsed, n)
    low, high = p.interval
    lines = [
        f"{name}: P(collapse) {p.share:.2f}",
        f"  {collapsed} of {n} draws; the draws' 95 % interval {100 * low:.0f}-{100 * high:.0f} %",
        "  (it covers the model's own draws, not its error against measurement;",
    ]
    target, split = name.removeprefix("story-"), o.shares_run is not None
    error = edgescore.error_lines(target, split=split) or [SCORED_TEXT]
    lines += [f"  {e}" for e in error[:-1]] + [f"  {error[-1]})"]
    for word, label in (
        (held.HELD, "P(held)"),
        (held.COLLAPSED, "P(collapsed, recovered)"),
        (held.NOT_RECOVERED, "P(not recovered)"),
    ):
        f = o.frequency(word)
        lines.append(f"  {label:<24} {f.share:4.2f}   {f.text()}")
    if off := recoveryscore.error_lines(target, split=split):
        lines += [f"  ({off[0]}", *(f"  {line}" for line in off[1:-1]), f"  {off[-1]})"]
    lines.append(f"  {recovery_text(o)}")
    how = {
        "pinned": "the busiest share pinned (--busiest-share)",
        "shares": f"the busiest share drawn from the measured {share_range(o.measured_shares)}",
        "seeds": "each its own system seed",
    }[o.drawn_by]
    lines.append(f"  {how}")
    if o.drawn_by == "shares" and o.shares_run is not None:
        lines.append(f"  in run {o.shares_run} (--shares-from)")
    if share_rule and (sentence := threshold_text(o)) is not None:
        lines += [f"  {part}" for part in sentence.split("; ")]
    return lines


def representative_lines(t: StoryTarget) -> list[str]:
    """The one draw the report's rows and charts show, in two lines."""
    s = t.summary
    if s is None:
        return []
    recovery = "past the run" if s.recovery_s is None else f"{s.recovery_s:.0f} s"
    return [
        f"  the report's draw: {held.outcome(s.visits_served_during, s.recovery_s)}, "
        f"{percent(s.visits_served_during)} of the visits served,",
        f"  goodput/s {num(s.goodput_before, 0)} → {num(s.goodput_during, 0)} → "
        f"{num(s.goodput_after, 0)}, {num(s.amplification, 2)} attempts a visit, "
        f"time to recover {recovery}",
    ]


def _frequencies(o: Odds) -> dict[str, Any]:
    return {
        word: {"k": f.k, "n": f.n, "p": f.share, "low": f.interval[0], "high": f.interval[1]}
        for word in (held.HELD, held.COLLAPSED, held.NOT_RECOVERED)
        for f in (o.frequency(word),)
    }


def json_document(run: StoryRun) -> dict[str, Any]:
    """`--json`: each target's probabilities and odds, and the map if one was drawn."""
    doc: dict[str, Any] = {"run_id": run.run_id, "targets": []}
    for t in run.targets:
        if t.odds is not None:
            doc["targets"].append(
                {
                    "name": t.name,
                    "probabilities": _frequencies(t.odds),
                    "recovery_s": {str(q): t.odds.recovery_quantile(q) for q in (0.5, 0.9)},
                    "odds": jsonmodel.to_json(t.odds),
                }
            )
    if run.odds_map is not None:
        doc["map"] = jsonmodel.to_json(run.odds_map)
    return doc

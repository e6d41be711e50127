"""docs/predict.md's totals of the model against the rows measured, counted again from the
page's own tables: each row's verdicts and figures, measured and predicted, so neither a row
added nor a total retyped can leave them apart.

No Docker, no model run: the page is read as a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "predict.md"
SECTION = "## The model against the rows measured"

#: A measured or predicted cell: "held", "collapsed, 76%, 33 s", "not recovered, 0% (85 503s)".
CELL = re.compile(r"^(held|collapsed|not recovered)(?:, (\d+)%)?(?:, (\d+) s)?(?: \(.*\))?$")
#: The page's own criteria: visits served within 10 points, the time to recover within 5 s.
SERVED_POINTS = 10
RECOVERY_S = 5
TOTALS = re.compile(
    r"\*\*In all: (\d+) rows\*\*.*?agrees in (\d+) \((\d+)%\).*?agree in (\d+) \((\d+)%\).*?"
    r"in (\d+) \((\d+)%\)",
    re.DOTALL,
)
OF_SIX = re.compile(r"^(\d+) of (\d+)\b")


@dataclass(frozen=True)
class Count:
    """Rows, and how many agree by: the verdict (held / collapsed / not recovered); held
    against collapsed alone (a sweep: its edge); every criterion."""

    rows: int = 0
    verdict: int = 0
    held: int = 0
    every: int = 0

    def __add__(self, other: Count) -> Count:
        return Count(
            self.rows + other.rows,
            self.verdict + other.verdict,
            self.held + other.held,
            self.every + other.every,
        )


@dataclass(frozen=True)
class Outcome:
    verdict: str
    served: int | None
    recovery_s: int | None


def outcome(cell: str) -> Outcome:
    m = CELL.match(cell)
    assert m, f"not a verdict cell: {cell!r}"
    return Outcome(
        m.group(1),
        None if m.group(2) is None else int(m.group(2)),
        None if m.group(3) is None else int(m.group(3)),
    )


def judge(measured: Outcome, predicted: Outcome) -> Count:
    """One row by the page's rule."""
    verdict = measured.verdict == predicted.verdict
    held = (measured.verdict == "held") == (predicted.verdict == "held")
    served = (
        measured.served is None
        or predicted.served is None
        or abs(measured.served - predicted.served) <= SERVED_POINTS
    )
    recovery = (
        measured.recovery_s is None
        or predicted.recovery_s is None
        or abs(measured.recovery_s - predicted.recovery_s) <= RECOVERY_S
    )
    return Count(1, int(verdict), int(held), int(verdict and served and recovery))


def tables(text: str) -> list[list[list[str]]]:
    """Each Markdown table of `text`: its header row, then its rows, as stripped cells."""
    out: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                current.append([c.strip() for c in line.strip().strip("|").split(" | ")])
        elif current:
            out.append(current)
            current = []
    return out


def count_table(table: list[list[str]]) -> Count:
    header, *rows = table
    if "every criterion" in header:  # the cliff's delays: counted per line, six delays each
        total = Count()
        for row in rows:
            cells = dict(zip(header, row, strict=True))
            agree = [OF_SIX.match(cells[k]) for k in ("verdict agrees", "held or collapsed agrees")]
            every = OF_SIX.match(cells["every criterion"])
            assert all(agree) and every, row
            n = int(every.group(2))
            total += Count(n, *(int(m.group(1)) for m in (*agree, every)))  # type: ignore[union-attr]
        return total
    if "M: held → fell" in header:  # a rate sweep: its edge agrees or not
        agrees = header.index("agrees")
        return sum((Count(1, *[int(r[agrees] == "yes")] * 3) for r in rows), Count())
    m = next(i for i, h in enumerate(header) if h == "M" or h.startswith("M verdict"))
    p = next(i for i, h in enumerate(header) if h == "P" or h.startswith("P verdict"))
    agrees = header.index("agrees")
    total = Count()
    for row in rows:
        counted = judge(outcome(row[m]), outcome(row[p]))
        said = row[agrees]
        assert (said == "yes") == bool(counted.every), f"{row[0]}: says {said!r}"
        total += counted
    return total


def section() -> tuple[list[list[list[str]]], str]:
    text = PAGE.read_text()
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    before, totals = body.split("**In all:", 1)
    return tables(before), "**In all:" + totals


def test_the_row_counter_reads_the_pages_rules() -> None:
    """Collapsed and recovered against not recovered differs in the verdict, not in held;
    16 points apart agrees in the verdict alone; a verdict without figures is compared as one."""
    assert judge(outcome("collapsed, 76%, 33 s"), outcome("not recovered, 72%")) == Count(
        1, 0, 1, 0
    )
    assert judge(outcome("not recovered, 21%"), outcome("not recovered, 37%")) == Count(1, 1, 1, 0)
    assert judge(outcome("held, 100%, 1 s"), outcome("collapsed, 61%, 5 s (x)")) == Count(
        1, 0, 0, 0
    )
    assert judge(outcome("collapsed, 0%, 12 s"), outcome("collapsed, 0%, 18 s")) == Count(
        1, 1, 1, 0
    )
    assert judge(outcome("held, 100%, 0 s"), outcome("held")) == Count(1, 1, 1, 1)
    with pytest.raises(AssertionError):
        outcome("fell at 51.2")


def test_the_pages_totals_are_its_tables_counted_again() -> None:
    found, totals = section()
    assert len(found) >= 1, "the section's tables were not found"
    count = sum((count_table(t) for t in found), Count())
    m = TOTALS.search(totals)
    assert m, "the 'In all' sentence was not found"
    rows, verdict, verdict_pct, held, held_pct, every, every_pct = map(int, m.groups())
    assert (rows, verdict, held, every) == (count.rows, count.verdict, count.held, count.every)
    for n, pct in ((verdict, verdict_pct), (held, held_pct), (every, every_pct)):
        assert pct == round(100 * n / rows), f"{n} of {rows} is not {pct}%"

"""docs/choose.md's and docs/cluster.md's counts, counted again: every "k of n" on these pages
(outside their runs tables) is named below with where it comes from, and recomputed:

- rows of docs/story.md's odds table, whose repeats are counted again from the kept records
  their runs name (test_story_odds reads the table and the records);
- one run of a page's runs table: a story or Swarm run's trusted repeats (or, counting
  `valid`, how many of all its repeats were trusted), or a prediction's
  draws, read from its record, which was written from the run's results (none is transcribed
  from a page).

A count on a page that no claim names fails, as does a word that overstates ("every time",
"always", "never"). Fisher's exact test beside two counts is computed again from them.

No Docker: the pages and the records are read as files.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from playground.core.odds import Frequency
from playground.incident import held, predictrecord, runrecords
from tests.unit.test_docs import RUN_ID, runs_table
from tests.unit.test_readme_counts import recount
from tests.unit.test_story_odds import RECOVERED, STORY, odds_rows

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: "k of n", with Wilson's interval where the page gives one; not a part of "3,574 of 8,317".
COUNT = re.compile(r"(?<!\d)(?<!\d,)(\d+) of (\d+)(?!\d|,\d)(?: \((\d+)-(\d+) %\))?")
OVERSTATING = re.compile(r"\b(every time|always|never)\b", re.IGNORECASE)
COLUMNS = ("held", "recovered", "not held", "not recovered", "valid")

Row = tuple[str, str]


@dataclass(frozen=True)
class Odds:
    """Rows of story.md's odds table, their repeats counted again from their records."""

    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Run:
    """Runs of a page's runs table (by label) and one target at one third-party delay."""

    page: str
    labels: tuple[str, ...]
    target: str
    delay_s: float = 2.0


Source = Odds | Run


@dataclass(frozen=True)
class Claim:
    """A count: the words just before it (in its paragraph or its table row), which count after
    them (`nth`), what it counts and where from: the sum of its sources, or with `each`, the
    one count every source gives."""

    words: str
    column: str
    sources: tuple[Source, ...]
    nth: int = 0
    each: bool = False


GEVENT: tuple[Row, ...] = (("uwsgi-gevent 2 x 1000", "2 s"), ("gunicorn-gevent 2 x 1000", "2 s"))
GTHREAD = Odds((("gunicorn-threads 2 x 64", "2 s"),))
UWSGI = Odds((("uwsgi-threads 2 x 64", "2 s"),))
UWSGI_22 = Odds((("uwsgi-threads 2 x 64", "2.2 s"),))
TIMEOUTS = Odds(
    tuple(
        (f"+ `{remedy}`", "2 s")
        for remedy in ("timeout-3", "timeout-1.5", "read-timeout", "retries", "retries-budget")
    )
)

BOUNDED = Odds((("+ `gunicorn-bounded-queue`", "2 s"),))
ONE_WORKER = Odds((("+ `one-worker` (1 x 128)", "2 s"),))
THREADS_2X = Odds((("+ `threads-2x`", "2 s"),))
THREADS_4X = Odds((("+ `threads-4x`", "2 s"),))
HAPROXY = Odds((("+ `haproxy`", "2 s"),))
REUSE_PORT = Odds((("+ `reuse-port`", "2 s"),))

CHOOSE: tuple[Claim, ...] = (
    Claim("point patched first): it held in", "held", (Odds(GEVENT),)),
    Claim(
        "and a small `backlog`. It held in",
        "held",
        (BOUNDED,),
    ),
    Claim("as did one worker with all the threads,", "held", (ONE_WORKER,)),
    Claim(
        "twice the threads,",
        "held",
        (THREADS_2X,),
    ),
    Claim(
        "of one worker that nginx balances,",
        "held",
        (Run("cluster.md", ("BK",), "gunicorn-threads"),),
    ),
    Claim("Gthread as it is held in", "held", (GTHREAD,)),
    Claim("uWSGI's 2 x 64 held at 2 s in", "held", (UWSGI,)),
    Claim("128 threads, held", "held", (UWSGI_22,)),
    Claim(
        "just past where 128 threads fill (",
        "held",
        (Run("story.md", ("EU",), "uwsgi-threads", 2.2),),
    ),
    Claim("alone on the machine,", "held", (Run("story.md", ("AM", "AN"), "uwsgi-threads", 2.2),)),
    Claim("with other work beside), and", "held", (Odds((("uwsgi-threads 2 x 64", "2.5 s"),)),)),
    Claim("twice its threads held", "held", (Odds((("+ `threads-2x`", "2.5 s"),)),)),
    Claim("it brought gthread back in", "recovered", (Odds((("+ `haproxy`", "2.5 s"),)),)),
    Claim("they came back within the run in", "recovered", (TIMEOUTS,)),
    Claim(
        "A circuit breaker recovered in",
        "recovered",
        (Odds((("+ `breaker`", "2 s"),)),),
    ),
    Claim(
        "gthread on free-threaded CPython held in",
        "held",
        (Run("choose.md", ("GK",), "nogil-gthread"),),
    ),
    Claim(
        "Flask's async views held in",
        "held",
        (Run("choose.md", ("GK", "GL"), "flask-async-views"),),
    ),
)

BJ_GTHREAD = Run("cluster.md", ("BJ",), "gunicorn-threads")
BJ_GEVENT = Run("cluster.md", ("BJ",), "gunicorn-gevent")
BK = Run("cluster.md", ("BK",), "gunicorn-threads")
FU = Run("cluster.md", ("FU",), "gunicorn-threads")
FV = Run("cluster.md", ("FV",), "gunicorn-threads")
GQ = Run("cluster.md", ("GQ",), "gunicorn-gevent")
GS_GU = Run("cluster.md", ("GS", "GU"), "gunicorn-gevent")
GT = Run("cluster.md", ("GT",), "gunicorn-gevent")

CLUSTER: tuple[Claim, ...] = (
    Claim("| gunicorn-gevent 2 x 1000 |", "held", (BJ_GEVENT,)),
    Claim("| gunicorn-gevent 2 x 1000 |", "recovered", (BJ_GEVENT,), nth=1),
    Claim("| gunicorn-gevent 2 x 1000 |", "held", (Odds((GEVENT[1],)),), nth=2),
    Claim("| gunicorn-gevent 2 x 1000 |", "recovered", (Odds((GEVENT[1],)),), nth=3),
    Claim("| gunicorn-threads 2 x 64 |", "held", (BJ_GTHREAD,)),
    Claim("| gunicorn-threads 2 x 64 |", "recovered", (BJ_GTHREAD,), nth=1),
    Claim("| gunicorn-threads 2 x 64 |", "held", (GTHREAD,), nth=2),
    Claim("| gunicorn-threads 2 x 64 |", "recovered", (GTHREAD,), nth=3),
    Claim("on the stack it held in", "held", (BJ_GTHREAD,)),
    Claim("on the compose path in", "held", (GTHREAD,)),
    Claim("| gunicorn-threads, 2 replicas x 1 x 64 |", "held", (BK,)),
    Claim("| gunicorn-threads, 2 replicas x 1 x 64 |", "recovered", (BK,), nth=1),
    Claim("| gunicorn-threads, 1 replica x 2 x 64 |", "held", (BJ_GTHREAD,)),
    Claim("| gunicorn-threads, 1 replica x 2 x 64 |", "recovered", (BJ_GTHREAD,), nth=1),
    Claim("Against the compose path's", "held", (GTHREAD,)),
    Claim("Against the compose path's", "held", (BK,), nth=1),
    Claim("the pool that did not hold in", "not held", (GTHREAD,)),
    Claim("of the story's repeats held in", "held", (BK,)),
    Claim(
        "as one worker of 128 threads held in",
        "held",
        (ONE_WORKER,),
    ),
    Claim("on the compose path, and `reuse-port` in", "held", (REUSE_PORT,)),
    Claim(
        "| uwsgi-threads 16 x 40 (640, the incident's) | 2 s |",
        "held",
        (Run("cluster.md", ("BL",), "uwsgi-threads"),),
    ),
    Claim(
        "| uwsgi-threads 16 x 40 | 2.2 s |",
        "held",
        (Run("cluster.md", ("BO",), "uwsgi-threads", 2.2),),
    ),
    Claim(
        "| uwsgi-threads 16 x 40 | 2.5 s |",
        "held",
        (Run("cluster.md", ("BP",), "uwsgi-threads", 2.5),),
    ),
    Claim(
        "| uwsgi-threads 16 x 125 (2,000, the estimate) | 2 s |",
        "held",
        (Run("cluster.md", ("BM",), "uwsgi-threads"),),
    ),
    Claim(
        "| uwsgi-threads 16 x 125 | 2.5 s |",
        "held",
        (Run("cluster.md", ("BQ",), "uwsgi-threads", 2.5),),
    ),
    Claim(
        "| uwsgi-gevent 16 x 1000 | 2 s |", "held", (Run("cluster.md", ("BN",), "uwsgi-gevent"),)
    ),
    Claim("| gunicorn-threads 2 x 64, three engines |", "held", (FV,)),
    Claim("| gunicorn-threads 2 x 64, three engines |", "recovered", (FV,), nth=1),
    Claim("| gunicorn-threads 2 x 64, one engine |", "held", (FU,)),
    Claim("| gunicorn-threads 2 x 64, one engine |", "recovered", (FU,), nth=1),
    Claim("(the row that held in", "held", (BK,)),
    Claim("They do not agree:", "held", (FV,)),
    Claim("5 of 5 on three engines against", "held", (FU,)),
    Claim("The same stack on one engine held in", "held", (BJ_GTHREAD,)),
    Claim("p99 at most 10 ms) in", "valid", (GS_GU,)),
    Claim("engines, in", "valid", (GQ,)),
    Claim("at the default weight and in", "valid", (GT,)),
    Claim("is not counted: gevent held in", "held", (GS_GU,)),
    Claim("on one engine and in", "held", (GT,)),
    Claim("uWSGI at 2.2 s held in", "held", (Run("story.md", ("EU",), "uwsgi-threads", 2.2),)),
    Claim(
        "repeats alone on the machine and in",
        "held",
        (Run("story.md", ("AM", "AN"), "uwsgi-threads", 2.2),),
    ),
)

#: Fisher's exact test beside two counts: the words before "p =", and the two claims' places.
FISHER = (
    ("on the compose path in 2 of 40", BJ_GTHREAD, GTHREAD),
    ("5 of 5 is a difference", BK, GTHREAD),
    ("5 of 5 on three engines against 0 of 5", FV, FU),
)

DEADLINE = Odds((("+ `deadline`", "2 s"),))
#: story.md's prose: its tables are counted by test_story_odds and test_story_tables.
STORY_PROSE: tuple[Claim, ...] = (
    Claim("- gevent, on uWSGI or Gunicorn, held in", "held", (Odds(GEVENT),)),
    Claim("uWSGI's 2 x 64 threads in", "held", (UWSGI,)),
    Claim("Gunicorn's gthread 2 x 64 held in", "held", (GTHREAD,)),
    Claim("(1-17 %) and came back within the run in", "recovered", (GTHREAD,)),
    Claim("waited over 4 s) it held in", "held", (DEADLINE,)),
    Claim("(1-20 %) and came back in", "recovered", (DEADLINE,)),
    Claim(
        "four times the threads each held in",
        "held",
        (BOUNDED, ONE_WORKER, THREADS_2X, THREADS_4X),
        each=True,
    ),
    Claim("At 2.2 s uWSGI held in", "held", (Run("story.md", ("EU",), "uwsgi-threads", 2.2),)),
    Claim(
        "alone on the machine (run EU),",
        "held",
        (Run("story.md", ("AM", "AN"), "uwsgi-threads", 2.2),),
    ),
    Claim("already gone. In", "not recovered", (Run("story.md", ("EH",), "gunicorn-threads"),)),
    Claim("but came back within the run in", "recovered", (DEADLINE,)),
    Claim(
        "(`limit_conn`) came back 1 s after in", "recovered", (Odds((("+ `limit-conn`", "2 s"),)),)
    ),
    Claim("Timeouts and retries do not save it**: not recovered in", "not recovered", (TIMEOUTS,)),
    Claim("HAProxy held at 2 s in", "held", (HAPROXY,)),
    Claim("(runs EY, FH), `reuse_port` in", "held", (REUSE_PORT,)),
    Claim("(run FL), the pool as it is in", "held", (GTHREAD,)),
    Claim(
        "third party was fast again, in",
        "recovered",
        (Run("story.md", ("GE",), "gunicorn-threads"),),
    ),
    Claim(
        "users who reload after 1 s, in",
        "recovered",
        (Run("story.md", ("EH",), "gunicorn-threads"),),
    ),
    Claim(
        "and users who back off in", "recovered", (Run("story.md", ("GD",), "gunicorn-threads"),)
    ),
    Claim("after 4 repeats, held in", "held", (Run("story.md", ("GG",), "gunicorn-gevent", 1.72),)),
    Claim(
        "gthread, collapsed in",
        "not held",
        (Run("story.md", ("GG",), "gunicorn-threads", 1.72),),
    ),
)

PAGES = {"choose.md": CHOOSE, "cluster.md": CLUSTER, "story.md": STORY_PROSE}
#: Pages whose tables other tests count: only their prose is read here.
PROSE_ONLY = {"story.md"}


def lines(text: str) -> list[str]:
    """The page up to its runs, as logical lines: a paragraph or list item joined into one
    line, a table row alone, links reduced to their words."""
    text = text.split("\n## The runs", 1)[0]
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    out: list[str] = []
    for line in text.splitlines():
        bare = line.strip()
        if not bare or bare.startswith(("|", "#")) or re.match(r"(\d+\.|-) ", bare) or not out:
            out.append(bare)
        else:
            out[-1] = f"{out[-1]} {bare}" if out[-1] else bare
    return [x for x in out if x]


def base(column: str) -> str:
    """The column a count is read from: "not held" is the held count's complement."""
    return column.removeprefix("not ")


def frequency(f: Frequency, column: str) -> Frequency:
    return Frequency(f.n - f.k, f.n) if column.startswith("not ") else f


@functools.cache
def stored() -> tuple[dict[str, runrecords.RunRecord], dict[str, predictrecord.PredictRecord]]:
    """Every story, Swarm and prediction record, by its run id's timestamp."""
    return (
        {RUN_ID.findall(r.run_id)[0]: r for r in runrecords.load_all()},
        {RUN_ID.findall(r.run_id)[0]: r for r in predictrecord.load_all()},
    )


def from_run(source: Run, column: str) -> Frequency:
    text = (DOCS / source.page).read_text(encoding="utf-8")
    ids = [i for label in source.labels for i in RUN_ID.findall(runs_table(text)[label]["run id"])]
    assert ids, f"{source.page} names no run {source.labels}"
    story, predicted = stored()
    k = n = 0
    for i in ids:
        if i in predicted:
            for t in predicted[i].targets:
                if t.name == source.target and t.draws:
                    n += t.draws
                    k += (t.held or 0) + (t.collapsed or 0 if base(column) == "recovered" else 0)
            continue
        record = story[i]
        assert record.source == runrecords.RECORDED, (
            f"{source}: a count rests on a transcribed record"
        )
        if record.story_settings().incident_delay != source.delay_s:
            continue
        mine = [t for t in record.targets if t.name == source.target]
        if column == "valid":  # the repeats whose generator kept its schedule, of all
            n, k = n + len(mine), k + sum(t.valid is True for t in mine)
            continue
        found = [t for t in mine if t.valid is True]
        n += len(found)
        want = RECOVERED if base(column) == "recovered" else {held.HELD}
        k += sum(t.verdict in want for t in found)
    return frequency(Frequency(k, n), column)


def expected(source: Source, column: str) -> Frequency:
    if isinstance(source, Odds):
        story = STORY.read_text(encoding="utf-8")
        by_key = {row.key: row for row in odds_rows(story)}
        return frequency(recount([by_key[k] for k in source.rows], base(column), story), column)
    return from_run(source, column)


def found(page: list[str], claim: Claim) -> tuple[int, re.Match[str]]:
    """The claim's count: its line, and the match (its place in that line)."""
    hits = [i for i, line in enumerate(page) if claim.words in line]
    assert len(hits) == 1, f"{claim.words!r}: {len(hits)} places on the page, want one"
    line = page[hits[0]]
    counts = list(COUNT.finditer(line, line.index(claim.words) + len(claim.words)))
    assert len(counts) > claim.nth, f"no count {claim.nth} after {claim.words!r}"
    return hits[0], counts[claim.nth]


def fisher(a: Frequency, b: Frequency) -> float:
    """Fisher's exact test, two-sided: the chance of a table as unlikely as (a, b) or less,
    with the margins fixed."""
    total, held_, n = a.n + b.n, a.k + b.k, a.n

    def p(k: int) -> float:
        return math.comb(held_, k) * math.comb(total - held_, n - k) / math.comb(total, n)

    seen = p(a.k)
    ks = range(max(0, n - (total - held_)), min(n, held_) + 1)
    return sum(p(k) for k in ks if p(k) <= seen * (1 + 1e-9))


def check(page: list[str], claim: Claim) -> str | None:
    """What is wrong with one claim, or None."""
    _, hit = found(page, claim)
    each = [expected(s, claim.column) for s in claim.sources]
    if claim.each and len(set(each)) > 1:
        return f"{claim.words!r}: its sources disagree: {sorted(w.text() for w in each)}"
    want = each[0] if claim.each else Frequency(sum(f.k for f in each), sum(f.n for f in each))
    shown = hit.group(0)
    text = want.text() if hit.group(3) is not None else f"{want.k} of {want.n}"
    return None if shown == text else f"{claim.words!r}: the page {shown}, the records {text}"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_count_of_the_page_is_counted_again(name: str) -> None:
    page = lines((DOCS / name).read_text(encoding="utf-8"))
    wrong = [w for claim in PAGES[name] if (w := check(page, claim)) is not None]
    assert wrong == []


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_page_has_no_count_that_no_claim_names(name: str) -> None:
    page = lines((DOCS / name).read_text(encoding="utf-8"))
    if name in PROSE_ONLY:
        page = [line if not line.startswith("|") else "" for line in page]
    places = [(i, hit.start()) for i, hit in (found(page, c) for c in PAGES[name])]
    every = {(i, m.start()) for i, line in enumerate(page) for m in COUNT.finditer(line)}
    assert len(set(places)) == len(places), "two claims name one count"
    assert [page[i][at:][:40] for i, at in sorted(every - set(places))] == []


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_page_overstates_no_count(name: str) -> None:
    """No "every time", "always" or "never" in a paragraph or row that gives a count."""
    page = lines((DOCS / name).read_text(encoding="utf-8"))
    assert [w for line in page if COUNT.search(line) for w in OVERSTATING.findall(line)] == []


def test_fishers_test_beside_two_counts_is_computed_again() -> None:
    page = " ".join(lines((DOCS / "cluster.md").read_text(encoding="utf-8")))
    for words, a, b in FISHER:
        shown = re.search(re.escape(words) + r".*?p = ([\d.]+)\)", page)
        assert shown, f"no p after {words!r}"
        p = fisher(expected(a, "held"), expected(b, "held"))
        digits = len(shown[1].split(".")[1])
        assert f"{p:.{digits}f}" == shown[1], f"{words!r}: the page p = {shown[1]}, counted {p}"


def test_the_recount_finds_a_count_its_records_do_not_give() -> None:
    """A claim can fail: gthread's held count set against the page's gevent count."""
    page = lines((DOCS / "choose.md").read_text(encoding="utf-8"))
    assert check(page, Claim("point patched first): it held in", "held", (GTHREAD,))) is not None
    assert fisher(Frequency(5, 5), Frequency(0, 5)) == pytest.approx(2 / 252)

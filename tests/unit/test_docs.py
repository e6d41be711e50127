"""What a reader of the repository sees: links that lead somewhere, recorded data free of the
recording machine.

No Docker: the Markdown and tests/data are read as files.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def markdown_files() -> list[Path]:
    """Every Markdown page of the repository: git's list where there is one, else a walk that
    leaves out what git ignores here (the virtualenv, results, builds). The recorded output
    under tests/data (the reference reports) is data, not a page."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = []
    if listed:
        return [ROOT / name for name in listed if not (ROOT / name).is_relative_to(DATA)]
    skip = {"results", "build", "node_modules"}
    return [
        path
        for path in ROOT.rglob("*.md")
        if not any(p.startswith(".") or p in skip or p.endswith(".egg-info") for p in path.parts)
        and not path.is_relative_to(DATA)
    ]


# ---- links --------------------------------------------------------------------------------------
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
# Inline code may run over a line break, never over a blank line.
INLINE_CODE = re.compile(r"`(?:[^`\n]|\n(?!\s*\n))*`")
# [text](target "title") and ![alt](target); the target ends at a space or the closing bracket.
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """A Markdown text without its code: fenced blocks and inline code."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def link_targets(text: str) -> list[str]:
    """The targets of a Markdown text's links and images, outside code."""
    text = prose(text)
    return INLINE_LINK.findall(text) + REFERENCE.findall(text)


def broken_links(text: str, *, folder: Path) -> list[str]:
    """The relative links of a page in `folder` (anchor dropped) that lead to no file or
    folder of the repository, or out of it."""
    broken = []
    for target in link_targets(text):
        if SCHEME.match(target) or target.startswith("#"):
            continue  # a web address, or a heading of the same page
        path = target.split("#", 1)[0].split("?", 1)[0]
        resolved = (folder / path).resolve()
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target} (outside the repository)")
        elif not resolved.exists():
            broken.append(target)
    return broken


def test_the_link_finder_sees_links_images_and_references() -> None:
    text = (
        'See [the spec](SPEC.md), ![a chart](story/c.png "title") and [web](https://x.org/a).\n'
        "[ref]: notes/ref.md\n"
        "`[in code](nowhere.md)`\n"
        "```\n[in a block](nowhere.md)\n```\n"
        "[a heading](#top), [a page's](findings.md#faults), [gone](gone.md#more)\n"
        "[back](../README.md), ![a real chart](story/sweep-2s.png)\n"
    )
    assert sorted(broken_links(text, folder=ROOT / "docs")) == [
        "SPEC.md",
        "gone.md#more",
        "notes/ref.md",
        "story/c.png",
    ]


def test_a_link_out_of_the_repository_is_broken_even_if_the_file_exists() -> None:
    outside = "../" * 5 + "etc/hostname"
    assert Path("/etc/hostname").exists()
    assert broken_links(f"[spec]({outside})", folder=ROOT / "docs") == [
        f"{outside} (outside the repository)"
    ]


def test_the_pages_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in markdown_files()}
    assert {"README.md", "docs/story.md", "docs/scenarios.md", "scale/README.md"} <= names


# A page named in the text without a link ("see SCENARIOS.md"): a reader looks for it too.
NAMED_PAGE = re.compile(r"(?<![\w./-])([\w./-]*\w\.md)\b")


def missing_pages(text: str, *, folder: Path) -> list[str]:
    """Markdown files named in the prose (outside code and link targets) that exist neither
    beside the page nor from the repository's root."""
    words = INLINE_LINK.sub("", prose(text))
    return [
        name
        for name in NAMED_PAGE.findall(words)
        if not (folder / name).exists() and not (ROOT / name).exists()
    ]


def test_a_page_named_in_prose_must_exist() -> None:
    text = "See SCENARIOS.md and scale/README.md, [faults](faults.md), `notes.md` and findings.md."
    assert missing_pages(text, folder=ROOT / "docs") == ["SCENARIOS.md"]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file_of_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert broken_links(text, folder=page.parent) == []
    assert missing_pages(text, folder=page.parent) == []


# ---- anchors ------------------------------------------------------------------------------------
def anchors(text: str) -> set[str]:
    """The anchors a page offers: its headings as GitHub slugs them (lower case, punctuation
    dropped, spaces to hyphens, a repeat numbered) and its `<a id="...">` tags."""
    found: set[str] = set(re.findall(r'<a id="([\w-]+)"></a>', text))
    seen: dict[str, int] = {}
    for line in FENCE.sub("", text).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def broken_anchors(text: str, *, page: Path) -> list[str]:
    """The links of a page whose anchor names no heading or tag of the page they lead to."""
    broken = []
    for target in link_targets(text):
        if SCHEME.match(target) or "#" not in target:
            continue
        path, anchor = target.split("#", 1)
        file = page if not path else (page.parent / path).resolve()
        if file.suffix == ".md" and file.is_file():
            if anchor not in anchors(file.read_text(encoding="utf-8")):
                broken.append(target)
    return broken


def test_the_anchor_finder_slugs_headings_as_github_does() -> None:
    text = '# `make scale`: ten thousand\n## Why gthread tips early: two queues\n## Runs\n## Runs\n<a id="x-y"></a>\n'
    assert anchors(text) == {
        "make-scale-ten-thousand",
        "why-gthread-tips-early-two-queues",
        "runs",
        "runs-1",
        "x-y",
    }
    page = ROOT / "docs" / "story.md"
    assert broken_anchors("[a](#the-odds) [b](#nowhere) [c](glossary.md#visit)", page=page) == [
        "#nowhere"
    ]


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_anchor_leads_to_a_heading(page: Path) -> None:
    assert broken_anchors(page.read_text(encoding="utf-8"), page=page) == []


# ---- recorded data ------------------------------------------------------------------------------
# What a recording leaves behind of the machine it ran on: its temporary or home folders, and
# its kernel (platform.release(), uname -a).
MACHINE_PATH = re.compile(r"/(?:tmp|home|root|work)/")
KERNEL = re.compile(
    r"\b\d+\.\d+\.\d+-(?:\d+-)?[a-z][\w.+-]*"  # 6.1.0-26-amd64, 5.15.0-91-generic, 6.18.44-fc-v669
    r"|\bLinux[- ]\S*\d+\.\d+\.\d+"  # platform.platform(), uname -a
    r"|PREEMPT|#\d+ SMP"
)


def recorded_files() -> list[Path]:
    """The recorded data: everything under tests/data but the scripts that record it."""
    return sorted(p for p in DATA.iterdir() if p.is_file() and p.suffix not in {".py", ".sh"})


def machine_traces(text: str) -> list[str]:
    return [m.group(0) for m in MACHINE_PATH.finditer(text)] + [
        m.group(0) for m in KERNEL.finditer(text)
    ]


@pytest.mark.parametrize(
    "sample",
    [
        "--results-dir /tmp/tmp.6QTqfxx0i0/main",
        "/home/ann/flask/results",
        "/root/results",
        "/work/repo/results",
        '"kernel": "6.18.44-fc-v669"',
        '"kernel": "6.1.0-26-amd64"',
        "5.15.0-91-generic",
        "Linux-6.1.0-26-cloud-amd64-x86_64-with-glibc2.36",
        "Linux vm 6.1.0 #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1",
    ],
)
def test_the_scrub_check_sees_a_machine(sample: str) -> None:
    assert machine_traces(sample)


@pytest.mark.parametrize(
    "sample",
    [
        '"compose_version": "2.26.1-4"',
        "wrk debian/4.1.0-3+b2 [epoll]",
        '"docker_version": "20.10.24+dfsg1"',
        "GET /tmpfoo HTTP/1.0",
        "http://ingress:8080/?delay=1",
    ],
)
def test_the_scrub_check_leaves_tool_versions_alone(sample: str) -> None:
    assert machine_traces(sample) == []


@pytest.mark.parametrize("path", recorded_files(), ids=lambda p: p.name)
def test_recorded_data_carries_no_trace_of_the_recording_machine(path: Path) -> None:
    assert machine_traces(path.read_text(encoding="utf-8", errors="replace")) == []


def test_recording_scrubs_what_a_run_writes_of_its_machine() -> None:
    """trim_fixtures.py scrubs a fresh recording: results.json as the runner writes it."""
    from tests.conftest import load_module

    trim = load_module("trim_fixtures", "tests/data/trim_fixtures.py")
    run = {
        "command": "playground run devserver -q --results-dir /tmp/tmp.Ab12Cd/main",
        "environment": {
            "kernel": "6.1.0-26-amd64",
            "platform": "Linux-6.1.0-26-amd64-x86_64-with-glibc2.36",
            "hostname": "builder-7",
            "python": "3.11.2",
        },
    }
    text = json.dumps(trim.scrub(run))
    assert machine_traces(text) == [] and "builder-7" not in text
    assert run["command"].endswith("--results-dir $out/main")
    assert run["environment"]["python"] == "3.11.2"


# ---- figure tables carry their run ----------------------------------------------------------------
# A cell that is a measured figure: a number with at most a unit, or an arrow of them.
FIGURE_CELL = re.compile(r"^[~≤≥<>+−-]?\s*\d[\d.,]*\s*(%|/s|s|ms|MB|GB|x|×)?(\s*(→|\(|-|–).*)?$")
RUN_ID = re.compile(r"\b20\d{6}-\d{6}\b")
COMMAND = re.compile(r"\b(playground|make) [a-z-]|\bdocker (compose|run)\b|\.ci/run|bin/pytest ")
# Figures that were not measured here: a source's published ones, or the registry's facts.
NOT_MEASURED = re.compile(r"as published|<!-- not measured")
# A page's one table of its runs: a short label, the run id, what it was, the command, the
# date, the machine and the load generator's check.
RUNS_COLUMNS = ("run", "run id", "what", "command", "date", "machine", "generator check")
# Prose cites a row of that table by its label: "run A", "runs B and C", "runs D, E and F",
# a line break allowed wherever a space is.
LABEL = r"[A-Z]{1,2}\b"
LABEL_SEPARATOR = r",\s+|\s+and\s+|\s+or\s+"
CITATION = re.compile(
    r"\b[Rr]uns?\s+(" + LABEL + r"(?:(?:" + LABEL_SEPARATOR + r")" + LABEL + r")*)"
)
PAGES = sorted((ROOT / "docs").glob("*.md"))
# Generated from the model's field docs, not written by hand.
GENERATED = {"results-schema.md"}


def table_rows(lines: list[str], start: int) -> tuple[list[str], list[list[str]], int]:
    """The header cells, the body rows' cells and the line after the table that starts at
    `start`."""
    j = start + 2
    while j < len(lines) and lines[j].startswith("|"):
        j += 1

    def cells(row: str) -> list[str]:
        return [c.strip() for c in row.strip().strip("|").split("|")]

    return cells(lines[start]), [cells(r) for r in lines[start + 2 : j]], j


def is_table_start(lines: list[str], i: int) -> bool:
    return (
        i + 1 < len(lines)
        and lines[i].startswith("|")
        and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]) is not None
    )


def figure_tables(text: str) -> list[tuple[str, str, str]]:
    """(heading, the table's section, the table's header row) of every Markdown table whose
    body averages at least one measured figure per row."""
    lines = text.splitlines()
    out, heading, start = [], "", 0
    sections: list[tuple[int, int, str]] = []
    for i, line in enumerate([*lines, "# end"]):
        if line.startswith("#"):
            sections.append((start, i, heading))
            start, heading = i, line
    for first, last, title in sections:
        section = "\n".join(lines[first:last])
        body = lines[first:last]
        i = 0
        while i < len(body) - 1:
            if is_table_start(body, i):
                _, rows, j = table_rows(body, i)
                rows = [[c.strip("*`") for c in r] for r in rows]
                figures = sum(1 for r in rows for c in r if FIGURE_CELL.match(c))
                if rows and figures >= len(rows):
                    out.append((title, section, body[i]))
                i = j
            else:
                i += 1
    return out


def test_the_figure_table_finder_sees_figures_and_not_prose() -> None:
    page = (
        "# A\n\n| mode | rps |\n|---|---|\n| gevent | 193.4 |\n| threads | 12 → 3 |\n\n"
        "# B\n\n| knob | cost |\n|---|---|\n| `timeout` | calls fail |\n"
    )
    assert [t[2] for t in figure_tables(page)] == ["| mode | rps |"]


def runs_table(text: str) -> dict[str, dict[str, str]]:
    """A page's runs table: each row's cells by column, keyed by the row's label."""
    lines = text.splitlines()
    for i in range(len(lines)):
        if not is_table_start(lines, i):
            continue
        header, rows, _ = table_rows(lines, i)
        names = [re.sub(r"\s*\(.*\)$", "", h).lower() for h in header]
        if tuple(names) == RUNS_COLUMNS:
            return {r[0]: dict(zip(names, r, strict=False)) for r in rows}
    return {}


def runs_table_faults(text: str) -> list[str]:
    """What a page's runs table lacks: a row without a run id, a command, a date, a machine or
    the generator's check, or a label used twice."""
    faults = []
    lines = text.splitlines()
    labels = [
        r[0]
        for i in range(len(lines))
        if is_table_start(lines, i)
        and tuple(re.sub(r"\s*\(.*\)$", "", h).lower() for h in table_rows(lines, i)[0])
        == RUNS_COLUMNS
        for r in table_rows(lines, i)[1]
    ]
    faults += [f"label {x} twice" for x in sorted({x for x in labels if labels.count(x) > 1})]
    for label, row in runs_table(text).items():
        if not re.fullmatch(LABEL, label):
            faults.append(f"{label!r}: not a label")
        if not RUN_ID.search(row.get("run id", "")):
            faults.append(f"run {label}: no run id")
        if not COMMAND.search(row.get("command", "")):
            faults.append(f"run {label}: no command")
        for column in ("date", "machine", "generator check"):
            if not row.get(column, "").strip(" -"):
                faults.append(f"run {label}: no {column}")
    return faults


def cited_labels(text: str) -> list[str]:
    """The labels a text cites: "run A", "runs B and C", "runs D, E or F"."""
    return [
        label
        for m in CITATION.finditer(prose(text))
        for label in re.split(LABEL_SEPARATOR, m.group(1))
    ]


def label_column(section: str, header: str) -> list[str]:
    """The labels in the "run" or "runs" column of the table under `header`: "A", "B, C"."""
    lines = section.splitlines()
    start = lines.index(header)
    names, rows, _ = table_rows(lines, start)
    return [
        label
        for column, name in enumerate(names)
        if name.lower() in {"run", "runs"}
        for row in rows
        if column < len(row)
        for label in re.split(r",\s*", row[column].strip("*`"))
        if re.fullmatch(LABEL, label)
    ]


def uncovered_figure_tables(text: str) -> list[str]:
    """The figure tables of a page that rest on no run of its runs table: neither a run id in
    their rows that is a row of the runs table, nor a label cited in their section; and every
    label or run id they name that the runs table lacks."""
    runs = runs_table(text)
    ids = {i for row in runs.values() for i in RUN_ID.findall(row.get("run id", ""))}
    missing = []
    for title, section, header in figure_tables(text):
        if NOT_MEASURED.search(section):
            continue
        table = "\n".join(line for line in section.splitlines() if line.startswith("|"))
        named = set(RUN_ID.findall(table))
        labels = set(cited_labels(section)) | set(label_column(section, header))
        unknown = sorted(named - ids) + sorted(f"run {x}" for x in labels - set(runs))
        if unknown or not (labels & set(runs) or named & ids):
            missing.append(f"{title!r}, {header[:50]!r}: {', '.join(unknown) or 'no run'}")
    return missing


def test_the_runs_checks_want_a_cited_row_with_its_provenance() -> None:
    runs = (
        "## The runs\n\n| run | run id | what | command | date (UTC) | machine | generator check |\n"
        "|---|---|---|---|---|---|---|\n"
        "| A | 20261125-043845-story | four modes | `make story` | 2026-11-25 | 2 cores | valid |\n"
        "| B | 20261125-052158-story | closed loop | by hand | 2026-11-25 | 2 cores | - |\n"
    )
    cited = "# X\n\nRun A, runs A and B:\n\n| mode | rps |\n|---|---|\n| gevent | 19 |\n\n"
    by_id = (
        "# Y\n\n| mode | run | rps |\n|---|---|---|\n| gevent | 20261125-043845-story | 19 |\n\n"
    )
    by_label = "# V\n\n| mode | runs | rps |\n|---|---|---|\n| gevent | A, B | 19 |\n\n"
    uncited = "# Z\n\nNo run.\n\n| mode | rps |\n|---|---|\n| gevent | 19 |\n\n"
    unknown = "# W\n\nRun C.\n\n| mode | rps |\n|---|---|\n| gevent | 19 |\n\n"
    assert cited_labels("runs A, B and C; run D or run E") == ["A", "B", "C", "D", "E"]
    assert cited_labels("(run\n  F, the rest) and runs G\nand H") == ["F", "G", "H"]
    assert uncovered_figure_tables(cited + by_id + by_label + runs) == []
    assert uncovered_figure_tables(uncited + runs) == ["'# Z', '| mode | rps |': no run"]
    assert uncovered_figure_tables(unknown + runs) == ["'# W', '| mode | rps |': run C"]
    assert uncovered_figure_tables(by_label.replace("A, B", "B, Q") + runs) == [
        "'# V', '| mode | runs | rps |': run Q"
    ]
    assert runs_table_faults(runs) == ["run B: no command", "run B: no generator check"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_figure_table_rests_on_a_row_of_the_pages_runs_table(page: Path) -> None:
    """A reader can repeat and compare every table of figures: it cites a row of the page's
    one runs table, which names the run id, the command, the date, the machine and the load
    generator's check."""
    text = page.read_text(encoding="utf-8")
    assert uncovered_figure_tables(text) == []
    assert runs_table_faults(text) == []


# ---- one name per run -----------------------------------------------------------------------------
def run_names(text: str) -> dict[str, frozenset[str]]:
    """A page's runs table as label -> the run ids of its row (a row may hold a set of runs)."""
    return {
        label: frozenset(RUN_ID.findall(row.get("run id", "")))
        for label, row in runs_table(text).items()
    }


def name_clashes(pages: dict[str, str]) -> list[str]:
    """Across pages (name -> text): a label that names different runs on two pages, and a run
    that goes by two labels."""
    runs_by_label: dict[str, dict[frozenset[str], list[str]]] = {}
    labels_by_run: dict[str, dict[str, list[str]]] = {}
    for page, text in pages.items():
        for label, ids in run_names(text).items():
            runs_by_label.setdefault(label, {}).setdefault(ids, []).append(page)
            for run in ids:
                labels_by_run.setdefault(run, {}).setdefault(label, []).append(page)
    clashes = [
        f"{label} names "
        + "; ".join(
            f"{', '.join(sorted(ids))} on {', '.join(where)}" for ids, where in seen.items()
        )
        for label, seen in sorted(runs_by_label.items())
        if len(seen) > 1
    ]
    clashes += [
        f"{run} is " + "; ".join(f"{label} on {', '.join(where)}" for label, where in seen.items())
        for run, seen in sorted(labels_by_run.items())
        if len(seen) > 1
    ]
    return clashes


def undefined_labels(text: str) -> list[str]:
    """The labels a page's prose cites that its own runs table does not define."""
    return sorted(set(cited_labels(text)) - set(runs_table(text)))


def test_the_name_check_sees_a_label_for_two_runs_and_a_run_with_two_labels() -> None:
    def page(*rows: str) -> str:
        header = "| run | run id | what | command | date (UTC) | machine | generator check |"
        body = [f"| {row} | x | `make story` | 2026-11-25 | 2 cores | valid |" for row in rows]
        return "\n".join([header, "|---|---|---|---|---|---|---|", *body]) + "\n"

    one = page("A | 20261125-043845-story", "B | 20261126-055136-story, 20261126-072411-story")
    assert name_clashes({"one.md": one, "same.md": one}) == []
    assert name_clashes({"one.md": one, "two.md": page("A | 20261126-055136-story")}) == [
        "A names 20261125-043845 on one.md; 20261126-055136 on two.md",
        "20261126-055136 is B on one.md; A on two.md",
    ]
    assert undefined_labels("Run A and runs B\nor C.\n\n" + one) == ["C"]


def test_each_run_has_one_name_on_every_page() -> None:
    """A label names one run wherever it stands, and a run keeps its label from page to page:
    README's run AB is story.md's run AB."""
    pages = [ROOT / "README.md", *PAGES]
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in pages}
    assert name_clashes(texts) == []


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_prose_cites_only_the_runs_its_page_defines(page: Path) -> None:
    assert undefined_labels(page.read_text(encoding="utf-8")) == []


# Provenance that belongs in a runs table: a run id, a time of day in UTC, this machine.
IN_RUNS_TABLE = re.compile(
    RUN_ID.pattern + r"|\b\d{1,2}:\d{2}(?:\s*[-–]\s*\d{1,2}:\d{2})? UTC\b|\bthis \d+-core machine"
)


def run_ids_in_prose(text: str) -> list[str]:
    """The lines of a page, code included, that name a run id, a UTC time of day or "this
    N-core machine" outside a table row."""
    return [
        line.strip()
        for line in text.splitlines()
        if IN_RUNS_TABLE.search(line) and not line.lstrip().startswith("|")
    ]


def test_the_run_id_finder_leaves_table_rows_alone() -> None:
    text = (
        "Run `20261125-043845-story` shows it.\n| A | 20261125-043845-story | x |\n"
        "    .venv/bin/playground report 20261126-070916\nrun A, 2026-11-25\n"
        "at 05:22-05:28 UTC, on this 2-core machine\n| B | 05:22 UTC | 2 cores |\n"
    )
    assert run_ids_in_prose(text) == [
        "Run `20261125-043845-story` shows it.",
        ".venv/bin/playground report 20261126-070916",
        "at 05:22-05:28 UTC, on this 2-core machine",
    ]


@pytest.mark.parametrize(
    "page",
    [ROOT / "README.md", *(p for p in PAGES if p.name not in GENERATED)],
    ids=lambda p: p.name,
)
def test_a_run_id_appears_only_in_a_table_row(page: Path) -> None:
    """Prose cites a run by its label in the page's runs table, never by its id."""
    assert run_ids_in_prose(page.read_text(encoding="utf-8")) == []


# ---- the reader's pages -------------------------------------------------------------------------
STORY_MAX_LINES = 350
ANSWER_MAX_LINES = 5


def opening_answer(text: str) -> list[str]:
    """The non-blank lines of a page's first section when it is "The answer", else []."""
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    if len(parts) < 2 or not parts[1].startswith("The answer\n"):
        return []
    return [line for line in parts[1].splitlines()[1:] if line.strip()]


def test_the_answer_finder_reads_the_first_section_only() -> None:
    page = "# T\n\nIntro.\n\n## The answer\n\n- one\n- two\n\n## More\n\n- three\n"
    assert opening_answer(page) == ["- one", "- two"]
    assert opening_answer("# T\n\n## More\n\n## The answer\n\n- one\n") == []


def test_the_story_opens_with_an_answer_of_five_lines_and_stays_short() -> None:
    text = (ROOT / "docs" / "story.md").read_text(encoding="utf-8")
    answer = opening_answer(text)
    assert 1 <= len(answer) <= ANSWER_MAX_LINES, answer
    assert len(text.splitlines()) <= STORY_MAX_LINES


# Odds as the pages write them: "7 of 10 (40-89 %)", Wilson's 95 % interval (playground.core.odds).
ODDS = re.compile(r"\b(\d+) of (\d+) \((\d+)-(\d+) %\)")


def wrong_odds(text: str) -> list[str]:
    """The odds of a text whose interval is not Wilson's for its k of n."""
    from playground.core.odds import Frequency

    return [
        m.group(0)
        for m in ODDS.finditer(text)
        if int(m.group(1)) > int(m.group(2))
        or m.group(0) != Frequency(int(m.group(1)), int(m.group(2))).text()
    ]


def test_the_odds_check_recomputes_the_interval() -> None:
    assert wrong_odds("held 7 of 10 (40-89 %), 3 of 3 (44-100 %); 3 of 3 (50-100 %)") == [
        "3 of 3 (50-100 %)"
    ]


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_every_odds_interval_is_wilsons(page: Path) -> None:
    assert wrong_odds(page.read_text(encoding="utf-8")) == []


# ---- by-hand commands ---------------------------------------------------------------------------
# The runner is called one way on every page, the README's: `.venv/bin/playground ...`, which
# works without activating the virtualenv. docs/results-schema.md is generated from the model.
BARE_RUNNER = re.compile(r"(?<![\w/.-])playground (?=[a-z-])")
INDENTED_CODE = re.compile(r"^(?: {4}|\t)(?![-*|] ).*$", re.MULTILINE)


def bare_runner_calls(text: str) -> list[str]:
    """The code of a page (fenced, indented or inline) that calls `playground` by its bare name."""
    code = [m.group(0) for m in FENCE.finditer(text)]
    code += [m.group(0) for m in INLINE_CODE.finditer(FENCE.sub("", text))]
    code += INDENTED_CODE.findall(FENCE.sub("", text))
    return [line.strip() for c in code for line in c.splitlines() if BARE_RUNNER.search(line)]


def test_the_bare_call_finder_sees_code_and_not_the_project_or_paths() -> None:
    text = (
        "The playground runs `playground story --repeat 3` and `.venv/bin/playground list`.\n\n"
        "    playground run gevent-pywsgi\n\n```sh\nmake bench   # .venv/bin/playground run\n"
        "playground compare A B\n```\n`src/playground/story/` and `flask-playground/loadgen`\n"
    )
    assert bare_runner_calls(text) == [
        "playground compare A B",
        "`playground story --repeat 3`",
        "playground run gevent-pywsgi",
    ]


@pytest.mark.parametrize(
    "page",
    [p for p in markdown_files() if p.name != "results-schema.md"],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_every_page_calls_the_runner_the_way_the_readme_does(page: Path) -> None:
    assert bare_runner_calls(page.read_text(encoding="utf-8")) == []


LOADGEN_RUN = re.compile(r"docker run\b[^`]*?flask-playground/(?:loadgen|openloop)", re.DOTALL)
LOADGEN_BUILD = "docker compose -f compose/loadgen.yml build"


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_load_generator_is_built_before_a_page_first_runs_it(page: Path) -> None:
    """`docker run ... flask-playground/loadgen` on a fresh clone fails with "pull access
    denied" until the image is built: a page that runs it says how first (the integration test
    test_by_hand_loadgen.py runs that step)."""
    text = page.read_text(encoding="utf-8")
    first_run = LOADGEN_RUN.search(text)
    if first_run is None:
        return
    assert LOADGEN_BUILD in text[: first_run.start()], first_run.group(0)[:80]


# ---- durations ----------------------------------------------------------------------------------
DURATION = re.compile(r"\b\d+ min(?: \d+(?:\.\d+)? s)?|\b\d+(?:\.\d+)? s\b")


def readme_durations(text: str) -> dict[str, str]:
    """The README's "How long each command takes": each bullet's command and its first figure."""
    block = text.split("How long each command takes", 1)[1].split("\n## ", 1)[0]
    found = {}
    for bullet in re.split(r"\n(?=- )", block):
        command = re.match(r"- `([^`]+)`", bullet)
        figure = DURATION.search(bullet)
        if command and figure:
            found[command.group(1)] = figure.group(0)
    return found


def measured_durations(text: str) -> dict[str, str]:
    """docs/testing.md's latest measurements: each bullet's command and its bold figure."""
    block = text.split("<!-- durations:", 1)[1].split("-->", 1)[1].split("\n\n", 1)[0]
    found = {}
    for bullet in re.split(r"\n(?=- )", block):
        command = re.match(r"- \*\*`([^`]+)`\*\*", bullet)
        figure = re.search(r"\*\*(" + DURATION.pattern + r")\*\*", bullet)
        if command and figure:
            found[command.group(1)] = figure.group(1)
    return found


def test_the_duration_finders_read_a_bullet_each() -> None:
    readme = "How long each command takes:\n\n- `make test`: 18 min 44 s (see)\n- `x`: 7.5 s\n"
    testing = "<!-- durations: -->\n- **`make test`** images built: **18 min 44 s** (21 s)\n\nmore"
    assert readme_durations(readme) == {"make test": "18 min 44 s", "x": "7.5 s"}
    assert measured_durations(testing) == {"make test": "18 min 44 s"}


def test_the_readme_states_the_latest_measured_durations() -> None:
    readme = readme_durations((ROOT / "README.md").read_text())
    measured = measured_durations((ROOT / "docs" / "testing.md").read_text())
    assert {"make bench", "make test", "make unit-test"} <= set(readme), readme
    assert readme == measured


# ---- the glossary -------------------------------------------------------------------------------
# Each term as the pages write it, and its entry in docs/glossary.md.
GLOSSARY_TERMS = {
    r"goodput": "goodput",
    r"open[ -]loop": "open-loop",
    r"closed[ -]loop": "closed-loop",
    r"collapsed?\b": "collapsed",
    r"time to recover": "time-to-recover",
    r"calls? (?:answered )?for nobody": "calls-for-nobody",
    r"send lag": "send-lag",
    r"coordinated omission": "coordinated-omission",
    r"metastable": "metastable-failure",
    r"backpressure": "backpressure",
    r"steady (?:rps|rate)": "steady-rps",
    r"efficiency": "efficiency",
    r"(?-i:SPLIT)": "split",
    r"(?:not recovered|did not recover)": "not-recovered",
    r"(?<![\d.])0 s\b": "zero-seconds",
    r"visits?\b": "visit",
    r"attempts?\b": "attempt",
    r"(?:its|the|an?) edge\b": "edge",
    r"Little's law": "littles-law",
    r"lesser page": "lesser-page",
}
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")


def unlinked_first_uses(text: str) -> list[str]:
    """The glossary's terms whose first use in a page's prose (outside code and headings) is
    not a link to their entry."""
    lines = [line for line in prose(text).splitlines() if not line.startswith("#")]
    words = "\n".join(lines)
    links = [(m.start(1), m.end(1), m.group(2)) for m in LINK.finditer(words)]
    missing = []
    for term, anchor in GLOSSARY_TERMS.items():
        first = re.search(r"(?i)\b" + term, words)
        if first is None:
            continue
        inside = [t for s, e, t in links if s <= first.start() < e]
        if not (inside and inside[0].endswith(f"glossary.md#{anchor}")):
            missing.append(first.group(0))
    return missing


def test_the_first_use_finder_wants_a_link_to_the_entry() -> None:
    text = (
        "# Goodput\n`goodput` in code, then [goodput](glossary.md#goodput) and goodput;\n"
        "the open loop, [the closed loop](glossary.md#closed-loop), [SPLIT](other.md#split)\n"
    )
    assert unlinked_first_uses(text) == ["open loop", "SPLIT"]


# The README and the reader's pages of docs/ (the results schema is generated from the model).
GLOSSARY_PAGES = [ROOT / "README.md"] + [
    ROOT / "docs" / f"{name}.md"
    for name in (
        "choose",
        "contenders",
        "demos",
        "faults",
        "findings",
        "offline-images",
        "predict",
        "reading-the-numbers",
        "scale",
        "scenarios",
        "story",
        "story-internals",
        "testing",
        "troubleshooting",
        "your-service",
    )
]


@pytest.mark.parametrize("page", GLOSSARY_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_glossary_term_is_linked_where_a_page_first_uses_it(page: Path) -> None:
    assert unlinked_first_uses(page.read_text(encoding="utf-8")) == []


def test_the_glossary_has_every_entry_the_pages_link_to() -> None:
    text = (ROOT / "docs" / "glossary.md").read_text()
    anchors = set(re.findall(r'<a id="([\w-]+)"></a>', text))
    assert set(GLOSSARY_TERMS.values()) <= anchors


# ---- no history ---------------------------------------------------------------------------------
# A page says what is, not how it came to be: no fix, no "earlier run", no target of our own,
# no commit.
HISTORY = re.compile(
    r"(?i)\b(?:got|was|were|been) (?:now )?fixed\b|\bfixed since\b"
    r"|\bfixed in (?:v?\d|commit|version)\b"
    r"|\bat its present weight|\bpresent weight|\b(?:an|the) earlier\b|\bearlier (?:run|day)"
    r"|\bheld out since|\bshort of the goal|\bthe goal\b|\bthe morning's"
    r"|\bno longer\b|(?-i:\b[Nn]ow\b)(?! and then)|\bused to be\b|\bpreviously\b"
    r"|\bsince then\b|\bbefore the fix|\bafter the fix|\bthis round\b|\blast round\b"
    r"|\bat first\b|\bchangelog\b|\b(?:commit|main) [0-9a-f]{7,40}\b"
)


def history(text: str) -> list[str]:
    return [m.group(0) for m in HISTORY.finditer(text)]


def test_the_history_finder_sees_the_phrases_and_not_their_neighbours() -> None:
    text = (
        "It got fixed; an earlier run at its present weight, held out since, short of the "
        "goal, 90%. The morning's figure. It no longer waits; now it does. main 37810c2. "
        "Now and then the queue fills; a schedule fixed in advance; the edge; a fixed pool."
    )
    assert history(text) == [
        "got fixed",
        "an earlier",
        "at its present weight",
        "held out since",
        "short of the goal",
        "The morning's",
        "no longer",
        "now",
        "main 37810c2",
    ]


@pytest.mark.parametrize(
    "page",
    [ROOT / "README.md", *(p for p in PAGES if p.name not in GENERATED)],
    ids=lambda p: p.name,
)
def test_no_page_tells_history(page: Path) -> None:
    assert history(page.read_text(encoding="utf-8")) == []

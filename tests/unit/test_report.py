"""playground.report on recorded runs: files, charts, self-contained HTML, sections by kind,
honest throughput, noisy repeats, Why, nulls, terminal tables, compare.

The fixtures are the runner's own results.json (tests/data/record-fixtures.sh re-records them);
tests change a copy where they need a case the recording did not produce."""

from __future__ import annotations

import base64
import copy
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from matplotlib.image import imread
from rich.console import Console

from playground import report as report_pkg
from playground.core.results import Entry, Run
from playground.core.verdicts import MIN_STEADY_WAVES
from playground.report import compare, compare_table, summary_table, write_report

DATA = Path(__file__).resolve().parents[1] / "data"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIXTURES = ("recorded", "sweep", "partial", "before_findings")


# ---- helpers -------------------------------------------------------------------------------------
def load(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"results_{name}.json").read_text(encoding="utf-8"))


def entries(results: dict[str, Any]) -> list[dict[str, Any]]:
    return ([results["calibration"]] if results.get("calibration") else []) + list(
        results["scenarios"]
    )


def entry_named(results: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in results["scenarios"] if e["name"] == name)


def section(markdown: str, heading: str, level: int = 2) -> str:
    """The text of one heading's section, up to the next heading of the same level."""
    marks = "#" * level
    start = markdown.index(f"\n{marks} {heading}\n")
    end = markdown.find(f"\n{marks} ", start + 1)
    return markdown[start : end if end != -1 else None]


def tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table in ``text``: header row first, split on unescaped pipes."""
    found, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                current.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
        elif current:
            found.append(current)
            current = []
    return found


def summary_rows(markdown: str) -> dict[str, dict[str, str]]:
    """name (c) -> {header: cell} over the throughput tables of the Summary."""
    out: dict[str, dict[str, str]] = {}
    for table in tables(section(markdown, "Summary")):
        header, *rows = table
        if header[:3] != ["entry", "n", "c"]:
            continue
        for row in rows:
            out[f"{row[0].strip('*')} (c={row[2]})"] = dict(zip(header, row, strict=True))
    return out


def render(table: Any) -> str:
    console = Console(record=True, width=250)
    console.print(table)
    return console.export_text()


def report(
    tmp_path: Path, results: dict[str, Any], sub: str = "run"
) -> tuple[list[Path], str, str]:
    paths = write_report(run_dir=tmp_path / sub, results=Run.from_json(results))
    run_dir = tmp_path / sub
    return (
        paths,
        (run_dir / "report.md").read_text("utf-8"),
        (run_dir / "report.html").read_text("utf-8"),
    )


def strings_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in strings_in(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings_in(v)}
    return {value} if isinstance(value, str) else set()


# ---- the recorded run, end to end ----------------------------------------------------------------
def test_recorded_run_round_trips_into_a_report_that_says_what_was_measured(tmp_path: Path) -> None:
    """runner output -> JSON -> model -> report: the figures in the report are the recorded ones."""
    data = load("recorded")
    run = Run.from_json(json.loads(json.dumps(Run.from_json(data).to_json())))
    _, markdown, page = report(tmp_path, run.to_json())
    rows = summary_rows(markdown)
    for entry in run.entries():
        row = rows[f"{entry.name} (c={entry.concurrency})"]
        if entry.error:
            assert row["ab rps"] == "—" and row["valid"].startswith("**ERROR**")
            continue
        assert float(row["ab rps"].split(" ")[0]) == pytest.approx(entry.rps, abs=0.05)
        if entry.steady_rps is not None:
            assert float(row["steady rps"].split(" ")[0]) == pytest.approx(
                entry.steady_rps, abs=0.05
            )
        for finding in entry.findings:
            assert html.escape(finding.message, quote=False) in html.unescape(
                page
            ) or finding.message in html.unescape(page)
    assert "Calibration: the harness ceiling" in markdown and "The nine scenarios" in markdown


@pytest.mark.parametrize("name, served", [("devserver", 1.0), ("bonus-psycopg2", 1.5)])
def test_a_short_run_shows_what_it_served_not_c_over_mean(
    tmp_path: Path, name: str, served: float
) -> None:
    """A report once read "steady 1.4 rps" for a dev server that served 0.98/s, "2.0" for the
    bonus without psycogreen that served 1.5/s. No figure may exceed what was measured."""
    data = load("recorded")
    devserver = Entry.from_json(entry_named(data, name))
    assert devserver.rps == pytest.approx(served, abs=0.1)
    assert devserver.steady_rps is None and devserver.waves < MIN_STEADY_WAVES
    assert any(f.code == "no-steady-state" for f in devserver.findings)
    _, markdown, _ = report(tmp_path, data)
    row = summary_rows(markdown)[f"{name} (c=5)"]
    assert row["steady rps"] == "— (not steady)"
    figures = [
        float(x)
        for cell in ("ab rps", "steady rps", "efficiency")
        for x in re.findall(r"\d+\.\d+", row[cell])
    ]
    assert max(figures) <= devserver.rps * 1.05 + 0.05
    why = section(markdown, "Why")
    assert "no steady figure: the run lasted only" in why


def test_a_long_run_keeps_its_steady_figure(tmp_path: Path) -> None:
    data = load("recorded")
    gevent = Entry.from_json(entry_named(data, "gevent-pywsgi"))
    assert gevent.waves >= MIN_STEADY_WAVES and gevent.steady_rps is not None
    assert gevent.steady_rps <= gevent.ideal_rps * 1.02


# ---- files and charts ----------------------------------------------------------------------------
def test_write_report_writes_markdown_html_and_every_chart(tmp_path: Path) -> None:
    data = load("recorded")
    paths, markdown, _ = report(tmp_path, data)
    names = [p.name for p in paths]
    assert names[:3] == ["rps.png", "threads.png", "latency.png"]
    assert names[-2:] == ["report.md", "report.html"]
    with_samples = [e for e in entries(data) if len(e.get("samples") or []) >= 2]
    assert with_samples
    for entry in with_samples:
        assert f"timeline-{entry['name']}-c{entry['concurrency']}.png" in names
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted(names)
    assert "## What top -H shows, through the run" in markdown


def test_sweep_run_also_writes_the_sweep_charts(tmp_path: Path) -> None:
    paths, markdown, _ = report(tmp_path, load("sweep"))
    assert {"sweep_rps.png", "sweep_threads.png", "sweep_rss.png"} <= {p.name for p in paths}
    pivot = tables(section(markdown, "Sweep"))[0]
    assert pivot[0] == ["scenario", "c=10", "c=50"]
    assert {row[0] for row in pivot[1:]} == {"devserver-threads", "gevent-pywsgi"}


def test_non_sweep_run_writes_no_sweep_charts(tmp_path: Path) -> None:
    paths, markdown, _ = report(tmp_path, load("recorded"))
    assert not any(p.name.startswith("sweep_") for p in paths)
    assert "\n## Sweep\n" not in markdown


@pytest.mark.parametrize("fixture", FIXTURES)
def test_charts_are_real_non_blank_pngs(tmp_path: Path, fixture: str) -> None:
    paths, _, _ = report(tmp_path, load(fixture))
    pngs = [p for p in paths if p.suffix == ".png"]
    assert pngs
    for png in pngs:
        assert png.read_bytes().startswith(PNG_SIGNATURE), png
        pixels = imread(png)
        assert pixels.shape[1] <= 1100, f"{png} is wider than the page"
        assert pixels.shape[0] >= 200 and pixels.shape[1] >= 600, png
        assert pixels[..., :3].std() > 0.05, f"{png} looks blank"


def test_the_timeline_chart_draws_the_samples(tmp_path: Path) -> None:
    """A timeline of flat samples and one of growing threads must not be the same picture."""
    data = load("recorded")
    entry = copy.deepcopy(entry_named(data, "gevent-pywsgi"))
    grown = copy.deepcopy(entry)
    grown["name"] = "grown"
    for i, sample in enumerate(grown["samples"]):
        sample["threads"] = 1 + 10 * i
    data["scenarios"] = [entry, grown]
    report(tmp_path, data)
    a = imread(tmp_path / "run" / f"timeline-gevent-pywsgi-c{entry['concurrency']}.png")
    b = imread(tmp_path / "run" / f"timeline-grown-c{entry['concurrency']}.png")
    assert a.shape == b.shape and abs(a - b).sum() > 100


def test_output_is_byte_for_byte_deterministic(tmp_path: Path) -> None:
    results = load("sweep")
    first = write_report(run_dir=tmp_path / "one", results=Run.from_json(results))
    second = write_report(run_dir=tmp_path / "two", results=Run.from_json(copy.deepcopy(results)))
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


# ---- HTML ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fixture", FIXTURES)
def test_html_is_self_contained_with_images_as_data_uris(tmp_path: Path, fixture: str) -> None:
    results = load(fixture)
    paths, _, page = report(tmp_path, results)
    for forbidden in ("<script", "<link", "@import", "url("):
        assert forbidden not in page.lower()
    # Links within the page go to a heading that has that id; everything else is a data URI.
    anchors = re.findall(r'href="#([^"]*)"', page)
    assert all(f'id="{a}"' in page for a in anchors), anchors
    references = re.findall(
        r"""\b(?:src|href)\s*=\s*(?!["']?#)["']?([^"'\s>]*)""", page, flags=re.IGNORECASE
    )
    pngs = [p for p in paths if p.suffix == ".png"]
    assert len(references) == len(pngs)
    embedded = [base64.b64decode(ref.split(",", 1)[1]) for ref in references]
    assert all(ref.startswith("data:image/png;base64,") for ref in references)
    assert embedded == [p.read_bytes() for p in pngs]
    remainder = page
    for text in sorted(strings_in(results), key=len, reverse=True):
        remainder = remainder.replace(html.escape(" ".join(text.split()), quote=False), "")
    assert "http://" not in remainder and "https://" not in remainder


def test_html_escapes_everything_copied_from_results(tmp_path: Path) -> None:
    results = load("recorded")
    entry = entry_named(results, "gevent-pywsgi")
    entry["notes"] = ["<script>alert('note')</script>"]
    entry["title"] = '<img src=x onerror="alert(1)">'
    results["environment"]["hostname"] = "<b>host</b>"
    results["command"] = "playground run --only 'a&b' </pre><h1>x</h1>"
    _, _, page = report(tmp_path, results)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert "<b>host</b>" not in page and "&lt;b&gt;host&lt;/b&gt;" in page
    assert "</pre><h1>x</h1>" not in page and "a&amp;b" in page


def test_invalid_and_errored_entries_say_so_in_bold_with_their_reasons(tmp_path: Path) -> None:
    _, markdown, page = report(tmp_path, load("before_findings"))
    row = summary_rows(markdown)["bonus-psycopg2 (c=5)"]
    assert row["valid"].startswith("**ERROR**: ") and "did not become healthy" in row["valid"]
    assert re.search(r"<strong>ERROR</strong>: [^<]*did not become healthy", page)
    assert "did not become healthy" in section(markdown, "Why")


# ---- sections by kind ----------------------------------------------------------------------------
def test_entries_are_grouped_into_sections_by_kind_in_the_mapping_order(tmp_path: Path) -> None:
    results = load("recorded")
    contender = copy.deepcopy(entry_named(results, "gevent-pywsgi")) | {
        "name": "granian",
        "kind": "contender",
    }
    stranger = copy.deepcopy(entry_named(results, "gevent-pywsgi")) | {
        "name": "odd",
        "kind": "mystery",
    }
    results["scenarios"] = [stranger, contender, *results["scenarios"]]
    _, markdown, _ = report(tmp_path, results)
    summary = section(markdown, "Summary")
    order = [
        summary.index(f"### {t}")
        for t in (
            "Calibration: the harness ceiling",
            "The nine scenarios",
            "2026 contenders",
            "Other entries",
        )
    ]
    assert order == sorted(order)
    assert "granian" in section(summary, "2026 contenders", 3)
    assert "odd" in section(summary, "Other entries", 3)


def test_a_new_kind_gets_its_own_section_by_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(report_pkg.SECTIONS, "story", ("The open-loop story", 5))
    results = load("recorded")
    results["scenarios"].append(
        copy.deepcopy(entry_named(results, "devserver")) | {"kind": "story"}
    )
    _, markdown, _ = report(tmp_path, results)
    summary = section(markdown, "Summary")
    assert summary.index("### The open-loop story") < summary.index("### The nine scenarios")


# ---- spread over repeats ---------------------------------------------------------------------------
def test_spread_is_shown_and_a_noisy_entry_is_flagged(tmp_path: Path) -> None:
    results = load("recorded")
    gevent = entry_named(results, "gevent-pywsgi")
    assert len(gevent["repeats"]) == 2 and gevent["spread"]["relative"] is not None
    noisy = copy.deepcopy(gevent) | {
        "name": "jittery",
        "spread": {**gevent["spread"], "relative": 0.08},
    }
    noisy["findings"] = [
        *gevent["findings"],
        {
            "code": "noisy",
            "severity": "warning",
            "message": "noisy: the 2 repeats lie 8.0% apart",
            "figures": {"spread": 0.08},
        },
    ]
    quiet = copy.deepcopy(gevent) | {
        "name": "steady-one",
        "spread": {**gevent["spread"], "relative": 0.01},
        "findings": [f for f in gevent["findings"] if f["code"] != "noisy"],
    }
    results["scenarios"] += [noisy, quiet]
    _, markdown, _ = report(tmp_path, results)
    rows = summary_rows(markdown)
    assert rows["jittery (c=200)"]["spread"] == "8.0% noisy"
    assert rows["steady-one (c=200)"]["spread"] == "1.0%"
    assert rows["gevent-pywsgi (c=200)"]["ab rps"].count("–") == 1  # median (min–max)
    text = render(summary_table(results=Run.from_json(results)))
    assert "8.0% noisy" in next(ln for ln in text.splitlines() if "jittery" in ln)


# ---- Why -----------------------------------------------------------------------------------------
def test_why_renders_findings_once_and_the_targets_own_notes(tmp_path: Path) -> None:
    results = load("recorded")
    entry = entry_named(results, "gevent-pywsgi")
    entry["findings"] = [
        {
            "code": "cpu-bound",
            "severity": "warning",
            "message": "CPU-bound, said once",
            "figures": {},
        }
    ]
    entry["notes"] = ["a note of the target's own", "CPU-bound, said once"]
    _, markdown, _ = report(tmp_path, results)
    why = section(markdown, "Why")
    assert why.count("CPU-bound, said once") == 1
    assert "**warning:** CPU-bound, said once" in why
    assert "a note of the target's own" in why


def test_why_explains_a_missed_target_the_runner_did_not_diagnose(tmp_path: Path) -> None:
    results = load("recorded")
    entry = entry_named(results, "gevent-pywsgi")
    entry.update(efficiency=0.5, findings=[], notes=[], invalid_reasons=[], valid=True)
    _, markdown, _ = report(tmp_path, results)
    assert "reached 50.0% of the ideal c/delay and the runner recorded no diagnosis" in markdown


def test_an_older_file_shows_its_notes(tmp_path: Path) -> None:
    results = load("before_findings")
    entry = entry_named(results, "devserver")
    assert "findings" not in entry and entry["notes"]
    _, markdown, _ = report(tmp_path, results)
    for note in entry["notes"]:
        assert note.split(":")[0] in section(markdown, "Why")


# ---- the rest of the document ----------------------------------------------------------------------
def test_partial_run_is_reported_as_incomplete(tmp_path: Path) -> None:
    _, markdown, _ = report(tmp_path, load("partial"))
    assert "> **Incomplete run:**" in markdown and "covers the 2 entries" in markdown
    assert "incomplete run" in render(summary_table(results=Run.from_json(load("partial"))))


def test_reproduce_section_has_the_run_command_and_every_entry_command(tmp_path: Path) -> None:
    results = load("recorded")
    _, markdown, _ = report(tmp_path, results)
    assert results["command"] in section(markdown, "How to reproduce")
    commands = section(markdown, "Commands per entry")
    for entry in entries(results):
        for command in (c for c in entry["commands"].values() if c):
            assert command in commands


def test_environment_block_gives_every_value_on_its_keys_row(tmp_path: Path) -> None:
    """Each of results.json's environment values on the row of its key (a nested one under
    its dotted key), as JSON writes a scalar; and a value changed in the file changes the row."""
    results = load("recorded")

    def rows(mapping: dict, prefix: str = "") -> list[tuple[str, str]]:
        out = []
        for key, value in mapping.items():
            if isinstance(value, dict) and value:
                out += rows(value, f"{prefix}{key}.")
            elif not isinstance(value, dict | list):
                shown = json.dumps(value) if isinstance(value, bool) else str(value)
                out.append((f"{prefix}{key}", shown))
        return out

    expected = rows(results["environment"])
    assert len(expected) > 20  # the packages and images count too
    env = section(report(tmp_path, results)[1], "Environment")
    for key, value in expected:
        assert f"| `{key}` | {value} |" in env, key
    results["environment"]["python"] = "3.99.1"
    assert "| `python` | 3.99.1 |" in section(report(tmp_path, results)[1], "Environment")


def test_markdown_special_characters_from_results_do_not_break_the_table(tmp_path: Path) -> None:
    results = load("recorded")
    entry_named(results, "gevent-pywsgi")["invalid_reasons"] = ["a|b *not bold*"]
    entry_named(results, "gevent-pywsgi")["valid"] = False
    _, markdown, _ = report(tmp_path, results)
    for table in tables(section(markdown, "Summary")):
        assert all(len(row) == len(table[0]) for row in table)
    assert r"a\|b \*not bold\*" in summary_rows(markdown)["gevent-pywsgi (c=200)"]["valid"]


def test_empty_run_says_there_is_nothing_to_summarise(tmp_path: Path) -> None:
    results = load("recorded")
    results.update(calibration=None, scenarios=[])
    paths, markdown, _ = report(tmp_path, results)
    assert [p.name for p in paths] == ["report.md", "report.html"]
    assert "nothing to summarise" in markdown


# ---- terminal tables and compare -----------------------------------------------------------------
def test_summary_table_renders_every_entry_and_its_validity() -> None:
    results = load("before_findings")
    text = render(summary_table(results=Run.from_json(results)))
    for entry in entries(results):
        assert entry["name"] in text
    assert "ERROR" in next(ln for ln in text.splitlines() if "bonus-psycopg2" in ln)
    gevent = Entry.from_json(entry_named(results, "gevent-pywsgi"))
    line = next(ln for ln in text.splitlines() if "gevent-pywsgi" in ln)
    assert f"{gevent.ideal_rps:.1f}" in line and "yes" in line


def test_summary_table_does_not_interpret_rich_markup_from_results() -> None:
    results = load("recorded")
    entry_named(results, "gevent-pywsgi")["name"] = "[bold red]sneaky[/]"
    assert "[bold red]sneaky[/]" in render(summary_table(results=Run.from_json(results)))


def make_b(a: dict[str, Any]) -> dict[str, Any]:
    """Run B: gevent-pywsgi 10% faster, devserver gone, a new entry, 4 CPUs."""
    b = copy.deepcopy(a)
    b["run_id"] = "20261125-080000"
    b["environment"]["cpu_count"] = 4
    entry_named(b, "gevent-pywsgi")["steady_rps"] = round(
        entry_named(a, "gevent-pywsgi")["steady_rps"] * 1.1, 2
    )
    b["scenarios"] = [e for e in b["scenarios"] if e["name"] != "devserver"]
    b["scenarios"].append(copy.deepcopy(entry_named(a, "gevent-pywsgi")) | {"name": "waitress"})
    return b


def test_compare_shows_deltas_and_marks_entries_missing_in_one_run() -> None:
    a = load("recorded")
    ra, rb = Run.from_json(a), Run.from_json(make_b(a))
    _header, *rows = tables(compare(a=ra, b=rb))[0]
    row = {r[0]: r for r in rows}
    assert row["gevent-pywsgi"][4] == "+10.0%"
    assert row["devserver"][3] == "missing" and row["devserver"][-1] == "missing in B"
    assert row["waitress"][2] == "missing" and row["waitress"][-2] == "missing in A"
    assert len(rows) == len(entries(a)) + 1
    text = compare(a=ra, b=rb)
    env_line = next(line for line in text.splitlines() if line.startswith("Environment"))
    assert "cpu_count (" in env_line and "→ 4)" in env_line
    table = render(compare_table(a=ra, b=rb))
    assert "+10.0%" in table and "missing in B" in table


def test_compare_keys_on_concurrency_too() -> None:
    sweep = load("sweep")
    _, *rows = tables(compare(a=Run.from_json(sweep), b=Run.from_json(sweep)))[0]
    assert sorted((r[0], r[1]) for r in rows) == sorted(
        (e["name"], str(e["concurrency"])) for e in entries(sweep)
    )


def test_the_document_model_renders_through_the_package(tmp_path: Path) -> None:
    """The faults and story reports render on the same model: one call gives both documents."""
    blocks = [
        report_pkg.Heading(1, "Faults"),
        report_pkg.Table(["a", "b"], [["1", report_pkg.Span("x|y", code=True)]]),
        report_pkg.Callout("careful"),
        report_pkg.Image("c.png", "a chart"),
    ]
    markdown, page = report_pkg.render(blocks, title="t", images={"c.png": PNG_SIGNATURE})
    assert "| 1 | `x\\|y` |" in markdown and "![a chart](c.png)" in markdown
    assert "<blockquote>" in page and "<td><code>x|y</code></td>" in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG_SIGNATURE).decode()}"' in page

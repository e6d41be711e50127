"""Tests for playground.report: files, charts, HTML self-containment, tables, "Why", nulls, compare."""

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

from playground.report import compare, compare_table, summary_table, write_report

DATA = Path(__file__).resolve().parents[1] / "data"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIXTURES = ("normal", "sweep", "partial")


# ---- helpers -------------------------------------------------------------------------------------


def load(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"results_{name}.json").read_text(encoding="utf-8"))


def entries(results: dict[str, Any]) -> list[dict[str, Any]]:
    return ([results["calibration"]] if results.get("calibration") else []) + list(results["scenarios"])


def entry_named(results: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in results["scenarios"] if e["name"] == name)


def section(markdown: str, heading: str) -> str:
    """The text of one "## heading" section, up to the next level-2 heading."""
    start = markdown.index(f"\n## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end != -1 else None]


def table_rows(text: str) -> list[list[str]]:
    """Body rows of the first Markdown table in ``text``, split on unescaped pipes."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[2:]]


def row_for(rows: list[list[str]], name: str, c: int | None = None) -> list[str]:
    """The summary row whose first cell is ``name`` (bold/kind suffix ignored), at concurrency c."""
    matches = [r for r in rows if r[0].strip("*").split(" (")[0] == name and (c is None or r[3] == str(c))]
    assert len(matches) == 1, (name, c, rows)
    return matches[0]


def render(table: Any) -> str:
    console = Console(record=True, width=250)
    console.print(table)
    return console.export_text()


def report(tmp_path: Path, results: dict[str, Any], sub: str = "run") -> tuple[list[Path], str, str]:
    paths = write_report(run_dir=tmp_path / sub, results=results)
    run_dir = tmp_path / sub
    return paths, (run_dir / "report.md").read_text("utf-8"), (run_dir / "report.html").read_text("utf-8")


def nulled(value: Any) -> Any:
    """Every number and boolean in a results tree replaced by None (strings and shapes kept)."""
    if isinstance(value, dict):
        return {k: nulled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [nulled(v) for v in value]
    if isinstance(value, bool | int | float):
        return None
    return value


def strings_in(value: Any) -> set[str]:
    """Every string leaf of a results tree (dict keys included)."""
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in strings_in(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings_in(v)}
    return {value} if isinstance(value, str) else set()


# ---- files and charts ----------------------------------------------------------------------------


def test_write_report_writes_markdown_html_and_the_two_main_charts(tmp_path: Path) -> None:
    paths, _, _ = report(tmp_path, load("normal"))

    assert [p.name for p in paths] == ["rps.png", "threads.png", "report.md", "report.html"]
    assert all(p.is_file() and p.stat().st_size > 0 for p in paths)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted(p.name for p in paths)


def test_sweep_run_also_writes_the_sweep_charts(tmp_path: Path) -> None:
    paths, _, _ = report(tmp_path, load("sweep"))

    names = {p.name for p in paths}
    assert {"sweep_rps.png", "sweep_threads.png", "sweep_rss.png", "rps.png", "threads.png"} <= names


def test_non_sweep_run_writes_no_sweep_charts(tmp_path: Path) -> None:
    paths, markdown, _ = report(tmp_path, load("normal"))

    assert not any(p.name.startswith("sweep_") for p in paths)
    assert "\n## Sweep\n" not in markdown


@pytest.mark.parametrize("fixture", FIXTURES)
def test_charts_are_real_non_blank_pngs(tmp_path: Path, fixture: str) -> None:
    paths, _, _ = report(tmp_path, load(fixture))

    pngs = [p for p in paths if p.suffix == ".png"]
    assert pngs
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG_SIGNATURE), png
        assert len(data) > 10_000, png
        pixels = imread(png)
        assert pixels.shape[0] >= 300 and pixels.shape[1] >= 600, png
        assert pixels[..., :3].std() > 0.05, f"{png} looks blank"


def test_output_is_byte_for_byte_deterministic(tmp_path: Path) -> None:
    results = load("sweep")
    first = write_report(run_dir=tmp_path / "one", results=results)
    second = write_report(run_dir=tmp_path / "two", results=copy.deepcopy(results))

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
    references = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]*)""", page, flags=re.IGNORECASE)
    pngs = [p for p in paths if p.suffix == ".png"]
    assert len(references) == len(pngs)
    assert all(ref.startswith("data:image/png;base64,") for ref in references)
    embedded = [base64.b64decode(ref.split(",", 1)[1]) for ref in references]
    assert embedded == [p.read_bytes() for p in pngs]

    # Only text copied from the results (URLs in commands) may mention http(s).
    remainder = page
    for text in sorted(strings_in(results), key=len, reverse=True):
        remainder = remainder.replace(html.escape(" ".join(text.split())), "")
    assert "http://" not in remainder and "https://" not in remainder
    assert "http://" in page  # the commands themselves are kept, so the stripping above did something


def test_html_escapes_everything_copied_from_results(tmp_path: Path) -> None:
    results = load("normal")
    entry = entry_named(results, "gevent-pywsgi")
    entry["notes"] = ["<script>alert('note')</script>"]
    entry["title"] = '<img src=x onerror="alert(1)">'
    results["environment"]["hostname"] = "<b>host</b>"
    results["command"] = "playground run --only 'a&b' </pre><h1>x</h1>"

    _, _, page = report(tmp_path, results)

    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;note&#x27;)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert "<b>host</b>" not in page and "&lt;b&gt;host&lt;/b&gt;" in page
    assert "</pre><h1>x</h1>" not in page and "a&amp;b" in page


def test_html_marks_invalid_and_errored_rows(tmp_path: Path) -> None:
    _, _, page = report(tmp_path, load("normal"))

    invalid_rows = re.findall(r'<tr class="invalid">(.*?)</tr>', page)
    error_rows = re.findall(r'<tr class="error">(.*?)</tr>', page)
    assert len(invalid_rows) == 1 and "uwsgi-threads" in invalid_rows[0]
    assert "INVALID" in invalid_rows[0] and "37 failed requests" in invalid_rows[0]
    assert len(error_rows) == 1 and "nginx-uwsgi" in error_rows[0]


# ---- Markdown ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES)
def test_summary_table_has_one_row_per_entry(tmp_path: Path, fixture: str) -> None:
    results = load(fixture)
    _, markdown, _ = report(tmp_path, results)

    rows = table_rows(section(markdown, "Summary"))
    assert len(rows) == len(entries(results))
    assert all(len(row) == len(rows[0]) for row in rows)
    seen = sorted((r[0].strip("*").split(" (")[0], r[3]) for r in rows)
    assert seen == sorted((e["name"], str(e["concurrency"])) for e in entries(results))


def test_invalid_and_errored_entries_are_marked_with_their_reasons(tmp_path: Path) -> None:
    results = load("normal")
    _, markdown, _ = report(tmp_path, results)
    rows = table_rows(section(markdown, "Summary"))

    invalid = row_for(rows, "uwsgi-threads")[-1]
    assert invalid.startswith("**INVALID**")
    for reason in entry_named(results, "uwsgi-threads")["invalid_reasons"]:
        assert reason in invalid
    errored = row_for(rows, "nginx-uwsgi")[-1]
    assert errored.startswith("**ERROR**")
    assert entry_named(results, "nginx-uwsgi")["error"] in errored
    for entry in entries(results):
        if entry["valid"]:
            assert row_for(rows, entry["name"])[-1] == "yes"


def test_why_section_lists_every_note_reason_and_error(tmp_path: Path) -> None:
    results = load("normal")
    _, markdown, _ = report(tmp_path, results)
    why = section(markdown, "Why")

    for entry in entries(results):
        errors = [entry["error"]] if entry["error"] else []
        for text in [*entry["notes"], *entry["invalid_reasons"], *errors]:
            assert text in why, text
    assert "### gevent-pywsgi" not in why  # valid, on target, no notes: nothing to explain
    assert "### calibration" not in why


def test_why_explains_missed_targets_the_runner_did_not_diagnose(tmp_path: Path) -> None:
    results = load("normal")
    entry_named(results, "devserver-threads")["notes"] = []  # connect_max_ms 1003: SYN retransmit
    slow = entry_named(results, "uwsgi-gevent")  # 60% of ideal, nothing else unusual, no notes
    slow["steady_rps"], slow["efficiency"] = 120.0, 0.6
    gevent = entry_named(results, "gunicorn-gevent")
    gevent["cpu_peak_pct"] = 99.0
    gevent["loadgen_saturated"] = True
    gevent["loadgen_cpu_peak_pct"] = 98.0
    _, markdown, _ = report(tmp_path, results)
    why = section(markdown, "Why")

    devserver = why[why.index("### devserver-threads") :].split("\n### ")[0]
    assert "SYN was retransmitted" in devserver and "backlog" in devserver
    slow_why = why[why.index("### uwsgi-gevent") :].split("\n### ")[0]
    assert "60.0%" in slow_why and "no diagnosis" in slow_why
    gevent_why = why[why.index("### gunicorn-gevent") :].split("\n### ")[0]
    assert "CPU-bound" in gevent_why and "load generator saturated" in gevent_why


def test_why_does_not_repeat_what_the_runner_already_said(tmp_path: Path) -> None:
    _, markdown, _ = report(tmp_path, load("normal"))
    why = section(markdown, "Why")

    devserver = why[why.index("### devserver-threads") :].split("\n### ")[0]
    assert devserver.count("SYN was retransmitted") == 1  # the runner's note, not also the report's


def test_repeat_spread_is_shown_as_median_min_max(tmp_path: Path) -> None:
    results = load("partial")
    _, markdown, _ = report(tmp_path, results)
    rows = table_rows(section(markdown, "Summary"))
    entry = entry_named(results, "gevent-pywsgi")
    assert len(entry["repeats"]) == 3

    row = row_for(rows, "gevent-pywsgi")
    (rps_lo, rps_hi), (st_lo, st_hi) = entry["spread"]["rps"], entry["spread"]["steady_rps"]
    assert row[5] == f"{entry['rps']:.1f} ({rps_lo:.1f}–{rps_hi:.1f})"
    assert row[7] == f"{entry['steady_rps']:.1f} ({st_lo:.1f}–{st_hi:.1f})"


def test_single_repeat_shows_no_spread(tmp_path: Path) -> None:
    results = load("normal")
    _, markdown, _ = report(tmp_path, results)
    row = row_for(table_rows(section(markdown, "Summary")), "gevent-pywsgi")

    assert row[5] == f"{entry_named(results, 'gevent-pywsgi')['rps']:.1f}"
    assert row[7] == f"{entry_named(results, 'gevent-pywsgi')['steady_rps']:.1f}"


def test_partial_run_is_reported_as_incomplete(tmp_path: Path) -> None:
    _, markdown, page = report(tmp_path, load("partial"))
    _, normal_markdown, _ = report(tmp_path, load("normal"), sub="normal")

    assert "**Incomplete run:**" in markdown
    assert "Incomplete run:" in page
    assert "incomplete" not in normal_markdown.lower()


def test_reproduce_section_has_the_run_command_and_every_entry_command(tmp_path: Path) -> None:
    results = load("normal")
    _, markdown, _ = report(tmp_path, results)

    assert results["command"] in section(markdown, "How to reproduce")
    commands = section(markdown, "Commands per entry")
    for entry in entries(results):
        for command in entry["commands"].values():
            assert command in commands, command


def test_environment_block_lists_every_key(tmp_path: Path) -> None:
    results = load("normal")
    _, markdown, _ = report(tmp_path, results)
    environment = section(markdown, "Environment")

    for key, value in results["environment"].items():
        if isinstance(value, dict):
            for sub_key, sub_value in value.items():
                assert f"`{key}.{sub_key}`" in environment
                assert sub_value in environment
        else:
            assert f"`{key}`" in environment


def test_how_to_read_explains_the_ab_cap_steady_rps_and_ideal(tmp_path: Path) -> None:
    _, markdown, _ = report(tmp_path, load("normal"))
    how = section(markdown, "How to read this")

    assert "n / ((n/c + 1) · delay)" in how
    assert "first request alone" in how
    assert "c / mean latency" in how
    assert "Ideal = c / delay" in how
    assert "calibration row is the same load aimed at the slow upstream alone" in how


def test_charts_are_linked_by_relative_file_name(tmp_path: Path) -> None:
    paths, markdown, _ = report(tmp_path, load("sweep"))

    charts = section(markdown, "Charts")
    for png in (p for p in paths if p.suffix == ".png"):
        assert f"]({png.name})" in charts
    assert str(tmp_path) not in markdown


def test_sweep_section_pivots_steady_rps_by_concurrency(tmp_path: Path) -> None:
    results = load("sweep")
    _, markdown, _ = report(tmp_path, results)
    sweep = section(markdown, "Sweep")

    assert "| scenario | c=10 | c=50 | c=200 |" in sweep
    rows = table_rows(sweep)
    assert [r[0] for r in rows] == ["devserver-threads", "gunicorn-gevent", "uwsgi-threads"]
    at_200 = {e["name"]: e for e in results["scenarios"] if e["concurrency"] == 200}
    invalid = at_200["uwsgi-threads"]
    assert rows[2][3] == f"{invalid['steady_rps']:.1f} ({invalid['efficiency'] * 100:.1f}%) **invalid**"
    valid = at_200["gunicorn-gevent"]
    assert rows[1][3] == f"{valid['steady_rps']:.1f} ({valid['efficiency'] * 100:.1f}%)"


# ---- robustness ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES)
def test_nulls_everywhere_do_not_crash(tmp_path: Path, fixture: str) -> None:
    results = nulled(load(fixture))
    paths, markdown, page = report(tmp_path, results)

    assert [p.name for p in paths] == ["report.md", "report.html"]  # nothing to plot
    assert "No chart" in markdown
    assert len(table_rows(section(markdown, "Summary"))) == len(entries(results))
    assert "None" not in section(markdown, "Summary") and "nan" not in section(markdown, "Summary")
    render(summary_table(results=results))
    render(compare_table(a=results, b=load(fixture)))
    compare(a=load(fixture), b=results)


@pytest.mark.parametrize(
    "results",
    [
        {},
        {"scenarios": None, "calibration": None, "environment": None, "settings": None},
        {"run_id": "x", "finished_at": "y", "scenarios": [], "calibration": None},
        {"run_id": "x", "scenarios": [{}, {"name": "only-a-name"}, "not-an-entry"], "calibration": {}},
        {"settings": {"sweep": [10, 20]}, "scenarios": [{"name": "a", "concurrency": 10}]},
    ],
)
def test_degenerate_results_do_not_crash(tmp_path: Path, results: dict[str, Any]) -> None:
    paths, markdown, page = report(tmp_path, results)

    assert {"report.md", "report.html"} <= {p.name for p in paths}
    assert markdown.startswith("# Flask concurrency playground")
    assert "</html>" in page
    render(summary_table(results=results))
    render(compare_table(a=results, b=results))
    assert "Comparison" in compare(a=results, b=results)


def test_empty_run_says_there_is_nothing_to_summarise(tmp_path: Path) -> None:
    results = load("normal") | {"scenarios": [], "calibration": None}
    paths, markdown, _ = report(tmp_path, results)

    assert [p.name for p in paths] == ["report.md", "report.html"]
    assert "No entries were recorded" in markdown
    assert "No chart" in markdown


def test_markdown_special_characters_from_results_do_not_break_the_table(tmp_path: Path) -> None:
    results = load("normal")
    entry_named(results, "gevent-pywsgi")["invalid_reasons"] = ["a|b *not bold*"]
    entry_named(results, "gevent-pywsgi")["valid"] = False
    _, markdown, _ = report(tmp_path, results)
    rows = table_rows(section(markdown, "Summary"))

    assert len(rows) == len(entries(results))
    assert all(len(row) == len(rows[0]) for row in rows)
    assert r"a\|b \*not bold\*" in row_for(rows, "gevent-pywsgi")[-1]


# ---- terminal tables and compare -----------------------------------------------------------------


def test_summary_table_renders_every_entry_and_its_validity() -> None:
    results = load("normal")
    text = render(summary_table(results=results))

    for entry in entries(results):
        assert entry["name"] in text
    line = next(ln for ln in text.splitlines() if "uwsgi-threads" in ln)
    assert "INVALID" in line and "37 failed requests" in line
    assert "ERROR" in next(ln for ln in text.splitlines() if "nginx-uwsgi" in ln)
    gevent = next(ln for ln in text.splitlines() if "gunicorn-gevent" in ln and "nginx" not in ln)
    assert "197.5" in gevent and "200.0" in gevent and "98.8%" in gevent and "178.2 / 181.8" in gevent
    assert "3 → 3" in gevent and "yes" in gevent


def test_summary_table_flags_incomplete_runs_and_shows_spread() -> None:
    text = render(summary_table(results=load("partial")))

    assert "incomplete run" in text
    assert "197.9 (196.2–198.8)" in text


def test_summary_table_does_not_interpret_rich_markup_from_results() -> None:
    results = load("normal")
    entry_named(results, "gevent-pywsgi")["name"] = "[bold red]sneaky[/]"
    text = render(summary_table(results=results))

    assert "[bold red]sneaky[/]" in text


def make_b(a: dict[str, Any]) -> dict[str, Any]:
    """Run B: pywsgi 10% faster, uwsgi-gevent halved, devserver-threads gone, a new scenario, 4 CPUs."""
    b = copy.deepcopy(a)
    b["run_id"] = "20261125-080000"
    b["environment"]["cpu_count"] = 4
    pywsgi_a = entry_named(a, "gevent-pywsgi")["steady_rps"]
    entry_named(b, "gevent-pywsgi")["steady_rps"] = round(pywsgi_a * 1.1, 2)
    entry_named(b, "uwsgi-gevent")["steady_rps"] = entry_named(a, "uwsgi-gevent")["steady_rps"] / 2
    b["scenarios"] = [e for e in b["scenarios"] if e["name"] != "devserver-threads"]
    newcomer = copy.deepcopy(entry_named(a, "gevent-pywsgi")) | {"name": "waitress", "steady_rps": 150.0}
    b["scenarios"].append(newcomer)
    return b


def test_compare_shows_deltas_and_marks_scenarios_missing_in_one_run() -> None:
    a = load("normal")
    b = make_b(a)
    rows = table_rows(compare(a=a, b=b))

    def row(name: str) -> list[str]:
        return next(r for r in rows if r[0] == name)

    pywsgi = row("gevent-pywsgi")
    assert pywsgi[1] == "200"
    assert pywsgi[2:5] == ["197.9", "217.7", "+10.0%"]
    assert row("uwsgi-gevent")[4] == "-50.0%"
    assert row("gunicorn-gevent")[4] == "+0.0%"
    devserver = row("devserver-threads")
    assert devserver[3] == "missing" and devserver[4] == "n/a" and devserver[-1] == "missing in B"
    waitress = row("waitress")
    assert waitress[2] == "missing" and waitress[-2] == "missing in A"
    assert row("uwsgi-threads")[-2:] == ["INVALID", "INVALID"]
    assert len(rows) == len(entries(a)) + 1  # every key present in either run, once


def test_compare_names_the_environment_keys_that_differ() -> None:
    a = load("normal")
    text = compare(a=a, b=make_b(a))

    env_line = next(line for line in text.splitlines() if line.startswith("Environment"))
    assert "1 of" in env_line and "cpu_count (2 → 4)" in env_line
    assert "git_commit" not in env_line
    same = next(line for line in compare(a=a, b=a).splitlines() if line.startswith("Environment"))
    assert "identical" in same


def test_compare_keys_on_concurrency_too() -> None:
    sweep = load("sweep")
    rows = table_rows(compare(a=sweep, b=sweep))

    expected = sorted((e["name"], str(e["concurrency"])) for e in entries(sweep))
    assert sorted((r[0], r[1]) for r in rows) == expected


def test_compare_table_renders_deltas_and_missing_entries() -> None:
    a = load("normal")
    text = render(compare_table(a=a, b=make_b(a)))

    assert "+10.0%" in text and "-50.0%" in text
    assert "missing in B" in next(ln for ln in text.splitlines() if "devserver-threads" in ln)
    assert "missing in A" in next(ln for ln in text.splitlines() if "waitress" in ln)
    assert "cpu_count" in text

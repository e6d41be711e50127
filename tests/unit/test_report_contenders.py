"""The contenders' section of the report (playground.report.contendersection): one table and one
chart, in report.md and report.html, answering which mode holds the most requests per MB and
per CPU-second and which ones serialise, at the tutorial's load and up to c=10,000."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from matplotlib.image import imread

from playground.core.results import Run
from playground.core.verdicts import verdicts
from playground.report import write_report
from playground.report.contendersection import (
    CHART_NAME,
    HEADERS,
    compared,
    mb_per_request,
    requests_per_cpu_s,
    requests_per_mb,
    verdict,
)
from tests.contenders_run import contender, contenders_run, scale_run

HEADING = "## 2026 contenders: requests per MB, per CPU-second, and who serialises"


def written(tmp_path: Path, run: Run) -> tuple[list[Path], str, str]:
    paths = write_report(run_dir=tmp_path, results=run)
    return (
        paths,
        (tmp_path / "report.md").read_text("utf-8"),
        (tmp_path / "report.html").read_text("utf-8"),
    )


def section(markdown: str) -> str:
    start = markdown.index(HEADING)
    end = markdown.find("\n## ", start + 1)
    return markdown[start:end]


def table(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("| ")]
    header, *rows = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    return [dict(zip(header, row, strict=True)) for row in rows]


def test_the_section_is_in_the_report_with_its_chart_and_no_file_beside_it(tmp_path):
    paths, markdown, page = written(tmp_path, contenders_run())
    text = section(markdown)
    rows = table(text)
    assert list(rows[0]) == list(HEADERS)
    assert [(r["mode"], r["c"]) for r in rows][:2] == [
        ("uvicorn-wsgitoasgi", "5"),
        ("flask-async-views", "200"),
    ]
    assert len(rows) == len(contenders_run().scenarios)
    assert f"]({CHART_NAME})" in text
    assert tmp_path / CHART_NAME in paths
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("contenders")) == [
        CHART_NAME
    ]  # one home: no contenders.md beside the report
    # The HTML is the same section, with the chart inlined.
    assert "2026 contenders: requests per MB" in page
    assert page.count("data:image/png;base64,") == len([p for p in paths if p.suffix == ".png"])


def test_the_verdicts_name_the_serialised_and_the_capped(tmp_path):
    _, markdown, _ = written(tmp_path, contenders_run())
    verdicts = {r["mode"]: r["verdict"] for r in table(section(markdown))}
    assert verdicts["uvicorn-wsgitoasgi"] == "serialised"
    assert verdicts["quart-hypercorn"] == "capped"  # aiohttp's 100 connections at c=200
    assert {
        verdicts[n]
        for n in (
            "gthread-1x200",
            "gthread-4x50",
            "granian-wsgi",
            "quart-hypercorn-nocap",
            "uvicorn-a2wsgi",
        )
    } == {"concurrent"}
    assert "- **c=5:** serialised: uvicorn-wsgitoasgi; capped: none." in markdown
    assert (
        "- **c=200:** most requests per MB: uvicorn-a2wsgi (3.08); most requests per "
        "CPU-second: quart-hypercorn-nocap (1351); serialised: none; capped: "
        "quart-hypercorn."
    ) in markdown


def test_the_figures_are_the_entrys_own_and_two_quotients():
    entry = contender("granian-wsgi", 200, 150.0, 0.95, 205, 2, 95.0, 512.0, 4.0)
    assert requests_per_mb(entry) == pytest.approx(0.95 * 200 * 1.0 / 95.0)  # Little's law
    assert requests_per_cpu_s(entry) == 250.0
    assert mb_per_request(entry) == 0.5
    unsteady = replace(entry, steady_rps=None, efficiency=None)
    assert requests_per_mb(unsteady) == pytest.approx(150.0 / 95.0)  # the tool's rate
    blank = contender("granian-wsgi", 200, None, None, None, None, None, None, None)
    assert (
        requests_per_mb(blank),
        requests_per_cpu_s(blank),
        mb_per_request(blank),
        verdict(blank),
    ) == (None, None, None, None)


def test_invalid_and_serialised_rows_are_shown_but_never_win(tmp_path):
    run = contenders_run()
    # Best on paper, but its run failed requests: it must not win.
    cheat = verdicts(
        contender(
            "gthread-1x200",
            200,
            190.0,
            0.99,
            203,
            2,
            5.0,
            10.0,
            0.1,
            valid=False,
            invalid_reasons=["3 failed requests"],
            failed=3,
        )
    )
    run.scenarios = [cheat if e.name == "gthread-1x200" else e for e in run.scenarios]
    _, markdown, _ = written(tmp_path, run)
    rows = {r["mode"]: r for r in table(section(markdown))}
    assert rows["gthread-1x200"]["verdict"] == "concurrent **INVALID**"
    assert "most requests per MB: uvicorn-a2wsgi" in markdown
    assert "most requests per CPU-second: quart-hypercorn-nocap" in markdown


def test_a_scale_run_shows_every_concurrency_up_to_10000(tmp_path):
    paths, markdown, _ = written(tmp_path, scale_run())
    rows = table(section(markdown))
    assert sorted({int(r["c"]) for r in rows}) == [100, 1000, 3000, 10000]
    verdicts = {(r["mode"], int(r["c"])): r["verdict"] for r in rows}
    assert verdicts[("gthread-1x200", 100)] == "concurrent"
    assert verdicts[("gthread-1x200", 1000)] == "capped"  # 200 threads hold 200 of 1000
    # A mode skipped once it stopped scaling has no row where it was not run; the answer
    # says so.
    assert {m for m, c in verdicts if c == 10000} == {"quart-hypercorn-nocap"}
    assert (
        "- **c=10000:** most requests per MB: quart-hypercorn-nocap (9.88); most requests "
        "per CPU-second: quart-hypercorn-nocap (1250); serialised: none; capped: none; not "
        "run, stopped scaling lower: gthread-1x200, gthread-4x50."
    ) in markdown
    assert tmp_path / CHART_NAME in paths


def test_no_section_and_no_chart_without_a_contender(tmp_path):
    run = contenders_run()
    run.scenarios = [replace(e, kind="scenario") for e in run.scenarios]
    assert compared(run) == []
    paths, markdown, _ = written(tmp_path, run)
    assert "2026 contenders: requests per MB" not in markdown
    assert not (tmp_path / CHART_NAME).exists() and tmp_path / CHART_NAME not in paths


def test_tutorial_scenarios_in_the_same_run_sit_beside_them_not_demos():
    run = contenders_run()
    run.scenarios += [
        contender("sync-gunicorn", 200, 180.0, 0.95, 4, 5, 150.0, 10.0, 2.0, kind="scenario"),
        contender("sanic", 200, 180.0, 0.95, 4, 5, 150.0, 10.0, 2.0, kind="demo"),
    ]
    kinds = {e.name: e.kind for e in compared(run)}
    assert kinds["sync-gunicorn"] == "scenario" and "sanic" not in kinds


def test_the_chart_is_a_real_png_with_a_bar_per_row(tmp_path):
    written(tmp_path, scale_run())
    pixels = imread(tmp_path / CHART_NAME)
    height, width = pixels.shape[:2]
    assert width <= 1100 and height >= 0.3 * 100 * 8  # 8 measured rows, 0.3 in each
    assert pixels[..., :3].std() > 0.05  # not blank


def test_a_capped_mode_does_not_win_however_little_it_spends(tmp_path):
    """Quart at aiohttp's cap spends less CPU per request than gthread 1 x 200 (0.84 against
    1.77 ms in run 20261123-122358; 2.58 against 3.50 in 20261123-150900), with half of c
    waiting for a connection."""
    run = contenders_run()
    run.scenarios = [e for e in run.scenarios if e.name in ("quart-hypercorn", "gthread-1x200")]
    _, markdown, _ = written(tmp_path, run)
    gthread = next(e for e in run.scenarios if e.name == "gthread-1x200")
    quart = next(e for e in run.scenarios if e.name == "quart-hypercorn")
    assert quart.cpu_ms_per_request < gthread.cpu_ms_per_request  # it would win on CPU alone
    per_cpu = 1000 / gthread.cpu_ms_per_request  # the recorded figures, not the report's
    assert (
        f"- **c=200:** most requests per MB: gthread-1x200 ({requests_per_mb(gthread):.2f}); "
        f"most requests per CPU-second: gthread-1x200 ({per_cpu:.0f}); serialised: none; "
        "capped: quart-hypercorn."
    ) in markdown
    run.scenarios = [e for e in run.scenarios if e.name == "quart-hypercorn"]
    _, markdown, _ = written(tmp_path, run)
    assert (
        "- **c=200:** no mode held this load; serialised: none; capped: quart-hypercorn."
        in markdown
    )


def test_the_scale_section_says_which_probe_set_the_delays_as_it_ran(tmp_path):
    """The probe runs with its scale override: Gunicorn gevent's has two workers, so the report
    must not call it one process."""
    from dataclasses import replace

    from playground.core.results import Entry, ScaleRunSettings

    run = scale_run()
    assert isinstance(run.settings, ScaleRunSettings) and run.settings.scale is not None
    scale = replace(run.settings.scale, probe="gunicorn-gevent", cpu_ms_per_request=2.11)
    run.settings = replace(run.settings, scale=scale)
    run.probe = Entry(
        name="probe-gunicorn-gevent",
        kind="probe",
        concurrency=200,
        processes=3,
        title="Gunicorn gevent worker x1; scale override: 2 workers x 9000",
    )
    _, markdown, _ = written(tmp_path, run)
    assert (
        "Measured CPU per request: 2.11 ms in the app (Gunicorn gevent worker x1; scale "
        "override: 2 workers x 9000, c=200, 3 processes sampled)."
    ) in markdown
    assert "one process" not in markdown

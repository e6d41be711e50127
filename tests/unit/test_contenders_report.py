"""The contenders' comparison (playground.contenders_report) from results.json entries."""

from __future__ import annotations

from playground import contenders_report as cr


def entry(name: str, *, c: int = 200, rps: float | None = 180.0, steady: float | None = None,
          rss: float | None = 100.0, cpu_ms: float | None = 2.0, kind: str = "contender",
          valid: bool = True, delay: float = 1.0, **kw) -> dict:
    return {"name": name, "title": name, "kind": kind, "concurrency": c, "delay": delay,
            "rps": rps, "steady_rps": steady if steady is not None else rps,
            "efficiency": None if rps is None else (steady or rps) * delay / c,
            "threads_peak": 10, "processes": 1, "rss_peak_mb": rss, "rss_per_request_kb": 50.0,
            "cpu_ms_per_request": cpu_ms, "cpu_seconds": 4.0, "valid": valid,
            "error": None, **kw}


def test_serialised_is_about_one_request_at_a_time():
    rows = cr.rows({"scenarios": [entry("uvicorn-wsgitoasgi", c=5, rps=0.98),
                                  entry("granian-wsgi", rps=180.0),
                                  entry("quart-hypercorn", rps=60.0)]})
    shapes = {r.name: r.shape for r in rows}
    assert shapes == {"uvicorn-wsgitoasgi": "serialised", "granian-wsgi": "concurrent",
                      "quart-hypercorn": "partly concurrent"}


def test_held_per_mb_and_per_cpu_second_come_from_the_entry():
    (row,) = cr.rows({"scenarios": [entry("granian-wsgi", rps=150.0, steady=190.0, rss=95.0,
                                          cpu_ms=4.0)]})
    assert row.held == 190.0  # steady rps x delay, Little's law
    assert row.held_per_mb == 2.0
    assert row.requests_per_cpu_s == 250.0
    assert row.at_once == 150.0  # the tool's rps x delay


def test_missing_figures_stay_missing():
    (row,) = cr.rows({"scenarios": [entry("granian-wsgi", rps=None, rss=None, cpu_ms=None)]})
    assert (row.held_per_mb, row.requests_per_cpu_s, row.shape) == (None, None, "-")
    assert "| granian-wsgi | 200 | - |" in cr.markdown([row])


def test_default_load_and_the_top_of_the_sweep_are_kept_not_the_middle():
    sweep = [entry("granian-wsgi", c=c, rps=c * 0.9, delay=1.0) for c in (100, 200, 1000, 10000)]
    rows = cr.rows({"scenarios": sweep})
    assert [r.concurrency for r in rows] == [200, 10000]


def test_the_answer_names_the_winners_and_the_serialised_but_not_invalid_rows():
    rows = cr.rows({"scenarios": [
        entry("granian-wsgi", rss=200.0, cpu_ms=1.0),
        entry("quart-hypercorn-nocap", rss=50.0, cpu_ms=3.0),
        # Best on paper, but its run was invalid: it must not win.
        entry("gthread-1x200", rss=10.0, cpu_ms=0.1, valid=False),
        entry("uvicorn-wsgitoasgi", c=5, rps=0.99, rss=5.0, cpu_ms=0.05),
    ]})
    lines = cr.answer(rows)
    assert lines[0] == "c=5: serialised: uvicorn-wsgitoasgi"
    assert lines[1] == ("c=200: most requests held per MB: quart-hypercorn-nocap (3.60); "
                        "most requests per CPU-second: granian-wsgi (1000); serialised: none")


def test_tutorial_scenarios_in_the_same_run_sit_beside_them():
    rows = cr.rows({"scenarios": [entry("gunicorn-threads", kind="scenario"),
                                  entry("granian-wsgi"), entry("x", kind="demo"),
                                  {"not": "an entry"}, "junk"], "calibration": entry("calibration")})
    assert [(r.name, r.kind) for r in rows] == [("granian-wsgi", "contender"),
                                                ("gunicorn-threads", "scenario")]


def test_markdown_has_one_row_per_measurement():
    rows = cr.rows({"scenarios": [entry("granian-wsgi"), entry("uvicorn-a2wsgi")]})
    text = cr.markdown(rows)
    table = [ln for ln in text.splitlines() if ln.startswith("| ")]
    assert len(table) == 1 + len(rows)
    assert all(ln.count("|") == len(cr.HEADERS) + 1 for ln in table)
    assert cr.markdown([]) == ""


def test_write_section_writes_a_png_and_markdown(tmp_path):
    results = {"scenarios": [entry("granian-wsgi"), entry("uvicorn-wsgitoasgi", c=5, rps=1.0)]}
    paths = cr.write_section(run_dir=tmp_path, results=results)
    assert [p.name for p in paths] == [cr.CHART_NAME, cr.MARKDOWN_NAME]
    assert (tmp_path / cr.CHART_NAME).read_bytes().startswith(b"\x89PNG")
    assert "uvicorn-wsgitoasgi" in (tmp_path / cr.MARKDOWN_NAME).read_text()


def test_write_section_does_nothing_without_contenders(tmp_path):
    results = {"scenarios": [entry("gunicorn-threads", kind="scenario")]}
    assert cr.write_section(run_dir=tmp_path, results=results) == []
    assert list(tmp_path.iterdir()) == []

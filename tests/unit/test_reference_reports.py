"""Every recorded run in tests/data re-renders to the same report as before.

Each run kept under tests/data (a results.json of a bench, scale or story run) goes through
`playground report` as a reader would run it, and its report.md must equal the reference
kept in tests/data/reports/<run>.md. A change to any report's Markdown fails here; when the
change is meant, write the references again from the current code and review their diff:

    REGENERATE=1 .venv/bin/pytest tests/unit/test_reference_reports.py

Regenerating prints what changed in each reference and compares nothing (a reference just
written equals itself); under CI (CI=true) it is refused: CI checks, it never rewrites.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path

import pytest

from playground import cli
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
REFERENCES = DATA / "reports"
REGENERATE = os.environ.get("REGENERATE") == "1"


def regenerate(reference: Path, markdown: str) -> str:
    """Write the reference again; what changed in it, in one line."""
    if os.environ.get("CI") == "true":
        pytest.fail("REGENERATE=1 under CI=true: the references are rewritten by hand, never in CI")
    old = reference.read_text(encoding="utf-8") if reference.exists() else None
    reference.parent.mkdir(exist_ok=True)
    reference.write_text(markdown, encoding="utf-8", newline="\n")
    name = reference.relative_to(ROOT)
    if old is None:
        return f"{name}: written ({len(markdown.splitlines())} lines)"
    diff = list(difflib.unified_diff(old.splitlines(), markdown.splitlines(), lineterm="", n=0))
    added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
    removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    return f"{name}: {added} lines added, {removed} removed" if diff else f"{name}: unchanged"


def recorded_runs() -> list[Path]:
    """Every results file under tests/data: a JSON object with the store's schema version."""
    runs = []
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "schema_version" in data:
            runs.append(path)
    return runs


RUNS = recorded_runs()


def test_the_recorded_runs_are_found_and_every_reference_has_its_run() -> None:
    names = {p.stem for p in RUNS}
    # Each kind the store keeps: bench runs (a finished, an unfinished, a sweep) and a story.
    assert {"results_recorded", "results_partial", "results_sweep"} <= names
    assert "story_results_recorded" in names
    if not REGENERATE:  # (the references may be being written beside this test)
        assert {p.stem for p in REFERENCES.glob("*.md")} == names


@pytest.mark.parametrize("recorded", RUNS, ids=lambda p: p.stem)
def test_a_recorded_run_renders_its_reference_report(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "results" / recorded.stem
    run_dir.mkdir(parents=True)
    shutil.copy(recorded, run_dir / "results.json")
    argv = ["report", str(run_dir), "--results-dir", str(tmp_path / "results")]
    assert cli.main(argv) == 0, capsys.readouterr().err
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    # A report names its run by id and by the recorded commands, never by where it was kept.
    assert str(tmp_path) not in markdown
    reference = REFERENCES / f"{recorded.stem}.md"
    if REGENERATE:
        changed = regenerate(reference, markdown)
        with capsys.disabled():
            print(f"\nREGENERATE: {changed}")
        pytest.skip(f"regenerated, not compared: {changed}")
    assert reference.exists(), f"no reference for {recorded.name}: run with REGENERATE=1"
    assert markdown == reference.read_text(encoding="utf-8"), (
        f"{recorded.name} renders a different report from {reference.relative_to(ROOT)}; "
        "if that is meant, REGENERATE=1 writes it again"
    )


def test_a_run_named_by_its_results_file_gets_its_report_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`playground report RUN/results.json`, as a reader copies the path the runner printed."""
    (recorded,) = [p for p in RUNS if p.stem == "story_results_recorded"]
    run_dir = tmp_path / "results" / recorded.stem
    run_dir.mkdir(parents=True)
    shutil.copy(recorded, run_dir / "results.json")
    argv = ["report", str(run_dir / "results.json"), "--results-dir", str(tmp_path / "results")]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert (run_dir / "report.md").read_text(encoding="utf-8") == (
        REFERENCES / f"{recorded.stem}.md"
    ).read_text(encoding="utf-8")


def test_regenerating_says_what_changed_and_is_refused_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    reference = ROOT / "tests" / "data" / "reports" / "_missing_" / "x.md"
    monkeypatch.setattr(Path, "write_text", lambda self, text, **kw: None)
    monkeypatch.setattr(Path, "mkdir", lambda self, **kw: None)
    assert regenerate(reference, "a\nb\n") == f"{reference.relative_to(ROOT)}: written (2 lines)"
    existing = REFERENCES / f"{RUNS[0].stem}.md"
    text = existing.read_text(encoding="utf-8")
    changed = text.replace("\n", "\nnew line\n", 1)
    assert regenerate(existing, changed).endswith(": 1 lines added, 0 removed")
    assert regenerate(existing, text).endswith(": unchanged")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI=true"):
        regenerate(existing, changed)

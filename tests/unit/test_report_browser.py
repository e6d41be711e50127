"""The HTML report in a real browser (headless Chromium): it fits a 1366-px laptop screen
without sideways scrolling. Needs Debian's `chromium` package."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from playground.core.results import Run
from playground.incident.storyresults import StoryRun
from playground.report import write_report
from playground.story import report as story_report
from tests.conftest import needs
from tests.contenders_run import contenders_run, scale_run

DATA = Path(__file__).resolve().parents[1] / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH, HEIGHT = 1366, 900
#: Written into the page once it has loaded: how wide the document is against the window.
PROBE = """<script>
window.addEventListener("load", () => {
  const wide = [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
    .map(e => e.tagName.toLowerCase()).slice(0, 5).join(",");
  document.body.setAttribute("data-measure",
    JSON.stringify({scroll: document.documentElement.scrollWidth, window: window.innerWidth,
                    images: [...document.images].filter(i => i.naturalWidth > 0).length,
                    wide: wide}));
});
</script>"""

pytestmark = needs(CHROMIUM, "chromium (apt-get install chromium)")


def measure(page: Path) -> dict:
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={WIDTH},{HEIGHT}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = re.search(r'data-measure="([^"]*)"', dom)
    assert found, dom[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"'))


@pytest.mark.parametrize("fixture", ["recorded", "sweep"])
def test_the_report_fits_a_laptop_screen(tmp_path: Path, fixture: str) -> None:
    results = json.loads((DATA / f"results_{fixture}.json").read_text())
    paths = write_report(run_dir=tmp_path, results=Run.from_json(results))
    m = measure(tmp_path / "report.html")
    assert m["window"] == WIDTH
    assert m["scroll"] <= m["window"], f"sideways scrolling: {m}"
    assert m["images"] == len([p for p in paths if p.suffix == ".png"])  # every chart decoded


@pytest.mark.parametrize("build", [contenders_run, scale_run], ids=["contenders", "scale"])
def test_the_contenders_section_fits_a_laptop_screen(tmp_path: Path, build) -> None:
    paths = write_report(run_dir=tmp_path, results=build())
    assert "2026 contenders: requests per MB" in (tmp_path / "report.md").read_text()
    m = measure(tmp_path / "report.html")
    assert m["scroll"] <= m["window"], f"sideways scrolling: {m}"
    assert m["images"] == len([p for p in paths if p.suffix == ".png"])


def test_the_story_report_fits_a_laptop_screen(tmp_path: Path) -> None:
    """The story's headline, every figure of every target, in tables that fit the screen."""
    recorded = json.loads((DATA / "story_results_recorded.json").read_text())
    paths = story_report.write_report(run_dir=tmp_path, run=StoryRun.from_json(recorded))
    m = measure(tmp_path / "report.html")
    assert m["scroll"] <= m["window"], f"sideways scrolling: {m}"
    assert m["images"] == len([p for p in paths if p.suffix == ".png"])


def test_the_measurement_sees_overflow(tmp_path: Path) -> None:
    """The probe can fail: a page wider than the window is caught."""
    page = tmp_path / "wide.html"
    page.write_text('<!DOCTYPE html><html><body><div style="width:2000px">x</div></body></html>')
    m = measure(page)
    assert m["scroll"] > m["window"] and "div" in m["wide"]

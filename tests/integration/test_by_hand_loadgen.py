"""The load generator's image, built by hand the way the docs say, answers as they say.

Every page that runs `docker run ... flask-playground/loadgen` says first how to build it
(`tests/unit/test_docs.py` holds them to that); docs/faults.md gives the build and a check
that the image runs. Both lines are run here exactly as printed there, from the root of the
repository, as a reader on a fresh clone would type them.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "faults.md"


def documented(pattern: str) -> str:
    """The command of the page's one line that matches, its trailing comment dropped."""
    lines = [line for line in PAGE.read_text().splitlines() if re.match(pattern, line)]
    assert len(lines) == 1, (pattern, lines)
    return lines[0].split("  #", 1)[0].strip()


def test_the_documented_build_then_the_documented_version_check() -> None:
    build = documented(r"docker compose -f compose/loadgen\.yml build\b")
    check = documented(r"docker run --rm flask-playground/loadgen \S+ --version\b")
    built = subprocess.run(build, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run(check, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.startswith("curl "), ran.stdout[:200]

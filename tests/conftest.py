"""Shared test set-up: where the repository is, the apps' shared module on sys.path, and
Ctrl-C as Python's own."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The apps import `querydelay` from common/ (in the images it sits beside them in /app).
# Only common/ goes on sys.path, never the root: its psycopg2/ folder would shadow psycopg2.
sys.path.insert(0, str(ROOT / "common"))

# A shell that starts a command in the background (`make test &`, nohup, a CI runner's job)
# hands it SIGINT ignored, and Python then never installs its KeyboardInterrupt handler: the
# tests that interrupt a run (and every `playground` they start, which inherits an ignored
# signal across exec but not a handler) would see a Ctrl-C do nothing. They test Ctrl-C as a
# reader's terminal delivers it.
signal.signal(signal.SIGINT, signal.default_int_handler)


def load_module(name: str, relpath: str):
    """Import a file under a unique module name (three apps are all called `app`)."""
    folder = str((ROOT / relpath).parent)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


def needs(present: object, what: str) -> pytest.MarkDecorator:
    """Skip a test whose tool is missing on a reader's machine; under CI (`CI=true`, as
    `.ci/run` runs) never skip, so a missing install step fails the test instead of hiding."""
    return pytest.mark.skipif(
        not present and os.environ.get("CI") != "true", reason=f"needs {what}"
    )

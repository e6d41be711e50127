"""Shared test set-up: where the repository is, and the apps' shared module on sys.path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The apps import `querydelay` from common/ (in the images it sits beside them in /app).
# Only common/ goes on sys.path, never the root: its psycopg2/ folder would shadow psycopg2.
sys.path.insert(0, str(ROOT / "common"))


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

"""No dead code in the runner's own modules: every function, class and method they define is
used somewhere in src/ besides its own definition (`Series.first/last/as_dicts`,
`sampling.wait_for` and the story's `analysis.attempts_from` were once defined and never
called)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "playground"
#: Every module of the runner, from the tree.
MODULES = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py"))
#: Entry points called from outside src/ (the console script, `python -m`, pytest, markdown-it).
USED_FROM_OUTSIDE = {"main", "schema_markdown", "image"}


def definitions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
    return [n for n in names if not n.startswith("__")]


def references() -> set[str]:
    """Every name and attribute the code refers to (not in comments or strings), plus the
    names modules export in their __all__ lists."""
    used: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom):
                used.update(alias.name for alias in node.names)
    return used


@pytest.mark.parametrize("module", MODULES)
def test_every_definition_is_used(module: str) -> None:
    used = references()
    unused = [
        name
        for name in definitions(SRC / module)
        if name not in used and name not in USED_FROM_OUTSIDE
    ]
    assert unused == [], f"{module} defines {unused} and nothing uses them"

"""Every function of the runner under 60 lines (docs/architecture.md: functions under 60
lines), measured with `ast` from its `def` (or its first decorator) to its last line."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "playground"
LIMIT = 60


def too_long(source: str, *, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Each function longer than `limit` lines, with its length."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > limit:
                found.append((node.name, length))
    return found


def test_no_function_is_over_60_lines() -> None:
    long = {
        f"{path.relative_to(SRC)}:{name}": length
        for path in sorted(SRC.rglob("*.py"))
        for name, length in too_long(path.read_text())
    }
    assert long == {}, f"split these by job: {long}"


def test_the_measure_can_fail() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    assert too_long(f"def f():\n{body}") == [("f", LIMIT + 1)]
    assert too_long(f"def f():\n{body[: body.rindex('    x')]}") == []
    assert too_long(f"@decorated\nasync def g():\n{body[: body.rindex('    x')]}") == [("g", 61)]

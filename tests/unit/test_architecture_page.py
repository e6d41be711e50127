"""docs/architecture.md read against the code: every module it names exists, every name it
places in a module is defined there, every other name it gives in code type is defined in the
runner, its tests or the Makefile, its table of kinds is the registry's, and the number of
subcommands it gives is the CLI's. The layer test checks the core's section; this one the rest.

No Docker: the page and the code are read as files.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from playground import cli
from playground.commands import kinds
from tests.unit.test_layers import ARCHITECTURE, ROOT

SRC = ROOT / "src" / "playground"
#: A module the page names as a pattern for a new one, not as a file.
PLACEHOLDER = re.compile(r"\bNAME\b")
#: "`faults/registry.py`'s `FAULTS`", "`Fault` in `faults/fault.py`", "`Fault` (`faults/fault.py`)".
PLACED = (
    re.compile(r"`(?P<path>[\w/]+\.py)`'s `(?P<name>[\w.]+)(?:\(\))?`"),
    re.compile(r"`(?P<name>[\w.]+)(?:\(\))?` in `(?P<path>[\w/]+\.py)`"),
    re.compile(r"`(?P<name>[\w.]+)(?:\(\))?` \(`(?P<path>[\w/]+\.py)`"),
)
#: A name in code type that is code: a constant, a class, a call or a dotted name.
CODE_NAME = re.compile(
    r"^(?:[A-Z][A-Z0-9_]{2,}|[A-Z][a-z]+[A-Z]\w*|[A-Z][a-z]+|[a-z_]\w*\(\)"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)$"
)
#: Files in code type that are not code.
DATA_FILE = re.compile(r"\.(?:json|md|yml|png|html|txt|log)$")
NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
           "fourteen fifteen sixteen").split()  # fmt: skip


def page() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def defined_in(tree: ast.AST) -> set[str]:
    """Every name a module defines or assigns, at any depth (a class's fields included)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        names.add(part.id)
                    elif isinstance(part, ast.Attribute):
                        names.add(part.attr)
    return names


@cache
def module_names(path: Path) -> frozenset[str]:
    return frozenset(defined_in(ast.parse(path.read_text(encoding="utf-8"))))


def module(path: str) -> Path | None:
    """The runner's module the page names by its path under src/playground or from the
    repository's root, or by the end of its path where the text around it gives the package (a
    module of the core's section, a package's own `run.py`): any module whose path ends so."""
    for candidate in (SRC / path, ROOT / path):
        if candidate.is_file():
            return candidate
    return next((p for p in sorted(SRC.rglob("*.py")) if p.as_posix().endswith(f"/{path}")), None)


def everywhere() -> set[str]:
    """What the runner and its tests define, and the Makefile's variables."""
    names: set[str] = set()
    for path in [*SRC.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        names |= module_names(path)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return names | set(re.findall(r"^([A-Z_]+)\s*[:?]?=", makefile, re.M))


def missing_modules(text: str) -> list[str]:
    named = set(re.findall(r"`([\w/]+\.py)`", text))
    assert named, "the page names no module: is this the right page?"
    return sorted(p for p in named if not PLACEHOLDER.search(p) and module(p) is None)


def misplaced(text: str) -> list[str]:
    placed = {(m["path"], m["name"]) for pattern in PLACED for m in pattern.finditer(text)}
    assert len(placed) >= 5, placed
    wrong = []
    for path, name in sorted(placed):
        found = module(path)
        if found is None or name.split(".")[0] not in module_names(found):
            wrong.append(f"`{name}` in {path}")
    return wrong


def undefined(text: str) -> list[str]:
    known = everywhere()
    names = {
        code
        for code in re.findall(r"`([^`\s]+)`", text)
        if CODE_NAME.match(code.rstrip(":")) and not DATA_FILE.search(code)
    }
    assert len(names) >= 20, names
    return sorted(n for n in names if n.removesuffix("()").split(".")[-1] not in known)


def test_every_module_the_page_names_exists():
    assert missing_modules(page()) == [], "docs/architecture.md names modules that are not there"


def test_every_name_the_page_places_in_a_module_is_defined_there():
    assert misplaced(page()) == [], "docs/architecture.md places names where they are not"


def test_every_name_in_code_type_is_defined_somewhere():
    """A constant, a class, a call or a dotted name in code type names code that exists, so a
    rename in the code that leaves the page behind fails here."""
    assert undefined(page()) == [], "docs/architecture.md names code that is not defined"


def test_each_check_fails_on_a_page_left_behind_by_a_rename():
    text = page()
    assert "`faults/registry.py`" in text and "`FAULTS` (`faults/registry.py`)" in text
    assert "`deferred_signals`" in text
    assert missing_modules(text.replace("`faults/registry.py`", "`faults/registrar.py`")) == [
        "faults/registrar.py"
    ]
    assert misplaced(text.replace("`FAULTS` (", "`FAULTZ` (")) == ["`FAULTZ` in faults/registry.py"]
    assert undefined(text.replace("`deferred_signals`", "`DeferredSignals`")) == ["DeferredSignals"]


def test_the_table_of_kinds_is_the_registrys():
    rows = re.findall(r"^\| `(\w+)` \|", page(), re.M)
    assert sorted(rows) == sorted(k.name for k in kinds.KINDS)
    count = re.search(r"makes (\w+) kinds of run", page())
    assert count is not None and NUMBERS.index(count[1]) == len(kinds.KINDS)


def test_the_number_of_subcommands_is_the_clis():
    parser = cli.build_parser()
    (sub,) = (a for a in parser._actions if a.dest == "command")
    count = re.search(r"The command line has (\w+) subcommands", page())
    assert count is not None and NUMBERS.index(count[1]) == len(sub.choices)

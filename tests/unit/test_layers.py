"""The layers (docs/architecture.md), read from the imports with `ast`: the core (`core/`) imports
nothing above it; the report imports the core; the incident's shared package (`incident/`) imports
the core and the report's document model and is imported by the story, its model, Swarm and the
commands only; each kind of run (bench, faults, story, predict, swarm) imports the core and the
report's document model, never another kind; every module sits in one of these places; the core's members are the ones
docs/architecture.md lists; and no module takes part in an import circle.

An edge that breaks a rule would be listed below with its reason (the lists are empty). An edge
listed there that is not in the code fails the test too, so whoever removes it removes its line.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from playground.commands import kinds

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = SRC / "playground"


def kind_packages() -> tuple[str, ...]:
    """The kinds of run, from their registry: a package each, none importing another."""
    return kinds.packages()


#: What a kind may import besides the core and itself.
DOCUMENT_MODEL = "playground.report.document"
#: The core: what every kind uses; it names no kind.
CORE = "core"
#: A package two kinds share, with the kinds that may import it.
SHARED = {"incident": ("story", "predict", "swarm")}
#: The top: they turn flags into settings and call one entry point; they may import anything.
TOP = ("commands", "cli", "__main__")

#: Circles that today's code still has, as the edges (importer, imported) that close them.
KNOWN_CIRCLES: dict[tuple[str, str], str] = {}
#: Imports across the layers that today's code still makes: (importer, imported): why.
KNOWN_CROSSINGS: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, leaving out `if TYPE_CHECKING:` blocks (types only, never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from (n for child in node.orelse for n in [child, *_nodes(child)])
            continue
        yield node
        yield from _nodes(node)


def imports(name: str) -> set[str]:
    """The playground modules one module imports, at the top or inside a function."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                ).rstrip(".")
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports(name) for name in MODULES}


def layer(name: str) -> str:
    """core, report, a shared package's name, a kind's name, top, or nowhere."""
    parts = name.split(".")
    first = parts[1] if len(parts) > 1 else ""
    if first in (CORE, "report", *SHARED, *kind_packages()):
        return first
    return "top" if first in TOP or name == "playground" else "nowhere"


def allowed(importer: str, imported: str) -> bool:
    mine, theirs = layer(importer), layer(imported)
    if "nowhere" in (mine, theirs):
        return False
    if mine == "top" or theirs == CORE:
        return True
    if mine == CORE:
        return False
    if mine == "report":
        return theirs == "report"
    if theirs in SHARED:
        return mine == theirs or mine in SHARED[theirs]
    return theirs == mine or imported == DOCUMENT_MODEL


def core_members() -> set[str]:
    """The core's modules as paths inside `core/`, from the files."""
    core = PACKAGE / CORE
    return {str(p.relative_to(core)) for p in core.rglob("*.py") if p.name != "__init__.py"}


def documented_core() -> set[str]:
    """The core's modules docs/architecture.md names in its section on the core (a module
    outside the core is named there by its own path: `faults/results.py`, `cli.py`)."""
    section = ARCHITECTURE.read_text().split("## The core, by job", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`((?:[a-z_]+/)?[a-z_]+\.py)`", section)
    return {n for n in named if not (PACKAGE / n.split("/")[0]).exists()}


def crossings() -> set[tuple[str, str]]:
    return {(a, b) for a, imported in GRAPH.items() for b in imported if not allowed(a, b)}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: the strongly connected components of more than one module
    (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            component.append(v)
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_place() -> None:
    """A module outside the core, the report, a shared package, a kind and the top fails."""
    assert [m for m in MODULES if layer(m) == "nowhere"] == []


def test_the_core_is_the_one_documented() -> None:
    """docs/architecture.md lists every member of the core and nothing else."""
    assert documented_core() == core_members()


def test_the_layers_hold() -> None:
    new = sorted(crossings() - set(KNOWN_CROSSINGS))
    assert new == [], (
        "imports across the layers (docs/architecture.md: move what two kinds share down "
        f"into the core): {new}"
    )


def test_no_import_circle() -> None:
    without_known = {a: {b for b in bs if (a, b) not in KNOWN_CIRCLES} for a, bs in GRAPH.items()}
    assert circles(without_known) == []


def test_the_known_exceptions_are_still_there() -> None:
    """An exception the code no longer needs goes from the list: the list only shrinks."""
    gone = [edge for edge in [*KNOWN_CIRCLES, *KNOWN_CROSSINGS] if edge[1] not in GRAPH[edge[0]]]
    assert gone == [], f"no longer imported, remove from the known exceptions: {gone}"
    circular = {m for component in circles(GRAPH) for m in component}
    closing_nothing = [edge for edge in KNOWN_CIRCLES if not set(edge) <= circular]
    assert closing_nothing == [], f"these edges close no circle any more: {closing_nothing}"


def test_the_checks_can_fail() -> None:
    """A faults module importing the bench, and a circle of two, are caught."""
    assert not allowed("playground.faults.overload", "playground.bench.diagnosis")
    assert not allowed("playground.story.run", "playground.faults.run")
    assert not allowed("playground.core.compose", "playground.bench.runner")
    assert not allowed("playground.core.runstore", "playground.incident.storyresults")
    assert not allowed("playground.bench.runner", "playground.incident.storyresults")
    assert not allowed("playground.stray", "playground.core.compose")
    assert allowed("playground.predict.run", "playground.incident.storyresults")
    assert layer("playground.stray") == "nowhere" and layer("playground.core.tools.ab") == CORE
    assert not allowed("playground.report.sections", "playground.bench.diagnosis")
    assert allowed("playground.story.sweep", "playground.report.document")
    assert not allowed("playground.story.sweep", "playground.report.benchcharts")
    assert allowed("playground.commands.bench", "playground.bench.runner")
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


#: The module names that repeat across packages, each the same job wherever it appears: a
#: kind's own run, plan, results, capture, analysis or settings, or a command's module named
#: after its subcommand beside the package module that does the work (commands/scale.py and
#: bench/scale.py). A name that means two things is not listed: rename one of the modules.
SAME_JOB = {
    "analysis",
    "captured",
    "outside",
    "plan",
    "record",
    "results",
    "run",
    "scale",
    "settings",
}


def test_a_module_name_repeats_across_packages_only_for_the_same_job() -> None:
    stems = [p.stem for p in PACKAGE.rglob("*.py") if p.stem != "__init__"]
    assert {s for s in stems if stems.count(s) > 1} == SAME_JOB

"""compose.py: every Docker method is used, and project names come from the files."""

from __future__ import annotations

import inspect
import re

from playground.compose import Docker, declared_name
from tests.conftest import ROOT

SOURCES = sorted((ROOT / "src" / "playground").rglob("*.py"))


def test_every_docker_method_is_called_somewhere():
    """Dead code hides what the tool really does; and a method some module calls must exist."""
    code = "\n".join(p.read_text() for p in SOURCES)
    unused = [
        name
        for name, member in inspect.getmembers(Docker, inspect.isfunction)
        if not name.startswith("_")
        and not re.search(rf"\.{name}\(", code.replace(f"def {name}(", ""))
    ]
    assert unused == []
    called = set(re.findall(r"\bdocker\.([a-z_]+)\(", code))
    assert called <= {name for name, _ in inspect.getmembers(Docker, inspect.isfunction)}, (
        called - {name for name, _ in inspect.getmembers(Docker, inspect.isfunction)}
    )


def test_network_falls_back_to_the_files_declared_name(tmp_path):
    """Without a Compose to ask (a failed scenario), the name the file declares, not its stem."""
    (tmp_path / "demo.yml").write_text("# a demo\nname: demo-x\nservices: {}\n")
    docker = Docker(root=tmp_path, env={"PATH": str(tmp_path)})  # no docker on this PATH
    assert declared_name(tmp_path / "demo.yml") == "demo-x"
    assert docker.network("demo.yml") == "demo-x_default"

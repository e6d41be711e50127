"""The registry: URLs the apps accept, unique names, clear errors for unknown ones."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from playground.core.demos import DEMO_FILES
from playground.core.errors import UsageError
from playground.core.scenarios import (
    REGISTRY,
    SCENARIO_FILES,
    SCENARIOS,
    registry_of,
    resolve,
)
from playground.core.target import Target
from tests.conftest import ROOT

from querydelay import parse_delay


@pytest.mark.parametrize("delay", [0, 0.00001, 0.5, 1, 2.25, 60])
def test_urls_carry_a_delay_the_apps_accept(delay):
    target = REGISTRY["gevent-pywsgi"]
    for url in (target.url(delay=delay), target.host_url(delay=delay)):
        raw = url.split("delay=", 1)[1]
        assert parse_delay([raw]) == pytest.approx(delay, abs=1e-9)


def test_unknown_names_are_a_clear_error():
    with pytest.raises(UsageError, match="unknown scenario 'nope'; known: devserver"):
        resolve(names=["devserver", "nope"])


def test_a_name_cannot_be_registered_twice():
    clash = Target(
        name="gevent-pywsgi",
        title="x",
        compose_file="x.yml",
        service="x",
        port=1,
        host_port=None,
        requests=1,
        concurrency=1,
    )
    with pytest.raises(ValueError, match="registered already"):
        registry_of(SCENARIOS, (clash,))
    assert REGISTRY["gevent-pywsgi"].compose_file == "async-gevent-pywsgi.yml"


# A fresh interpreter for each order: what this test process imported already cannot count.
_NAMES_AFTER = """
import importlib, json, sys
names = []
for module in sys.argv[1:]:
    importlib.import_module(module)
    names.append(list(importlib.import_module("playground.core.scenarios").REGISTRY))
print(json.dumps(names))
"""


def registry_names_after(*modules: str, tmp_path) -> list[list[str]]:
    """The registry's names after importing each module in turn, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _NAMES_AFTER, *modules],
        cwd=tmp_path,  # not the repository root, whose folders would shadow packages
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_registry_is_complete_alone_and_no_import_changes_it(tmp_path):
    from playground.core import contenders, demos, remedies
    from playground.core import scenarios as s

    every = [
        *s.SCENARIOS,
        s.CALIBRATION,
        *s.ARES_VARIANTS,
        *s.STORY_TARGETS,
        *s.STORY_CONTENDERS,
        *contenders.CONTENDERS,
        *demos.DEMOS,
        *demos.PUBLISHED,
        *remedies.variants(s.STORY_TARGETS),
    ]
    assert "story-uwsgi-threads+timeout-3" in {t.name for t in every}
    alone, *after = registry_names_after(
        "playground.core.scenarios",
        "playground.core.demos",
        "playground.core.contenders",
        "playground.core.remedies",
        "playground.cli",  # every command, so every module a run imports
        tmp_path=tmp_path,
    )
    assert alone == [t.name for t in every]
    assert after == [alone] * len(after)
    # The other way round: the sources first, then the registry, is the same registry.
    (*_, remedies_first) = registry_names_after(
        "playground.core.remedies",
        "playground.core.contenders",
        "playground.core.demos",
        "playground.core.scenarios",
        tmp_path=tmp_path,
    )
    assert remedies_first == alone


# --- the registry is the one home of the scenario facts ------------------------------------
def make_list(name: str) -> list[str]:
    """A `NAME := a b \\ c` list of the Makefile, continuation lines joined."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    match = re.search(rf"^{name}\s*:=(.*)$", text, re.MULTILINE)
    assert match, f"the Makefile has no {name}"
    return match.group(1).split()


def test_the_makefiles_lists_are_the_registrys():
    assert make_list("SCENARIO_FILES") == list(SCENARIO_FILES)
    assert make_list("DEMO_FILES") == list(DEMO_FILES)
    # `make down` stops every story file the registry has (the remedies are overrides of them).
    story = [t.compose_file for t in REGISTRY.values() if t.kind == "story" and not t.overrides]
    assert make_list("STORY_FILES") == list(dict.fromkeys(story))


def test_the_nine_files_are_the_tutorials():
    assert len(SCENARIO_FILES) == 9
    assert all((ROOT / f).is_file() for f in (*SCENARIO_FILES, *DEMO_FILES))


@pytest.mark.parametrize("target", SCENARIOS, ids=lambda t: t.name)
def test_structured_facts_agree_with_the_title(target):
    assert target.server and target.model in ("single", "threads", "gevent")
    if target.model == "single":
        assert target.capacity == 1
    if target.per_worker is not None and target.model != "single":
        assert str(target.per_worker) in target.title or target.workers == 1, target
    assert target.database == ("psycopg2" in target.compose_file)
    assert (target.proxy == "nginx") == target.title.startswith("nginx")


def readme_row(t: Target) -> list[str]:
    """The README's row for a target, from the registry's facts alone."""
    per_worker = "one per request" if t.per_worker is None else str(t.per_worker)
    return [
        f"`{t.name}`",
        f"`{t.compose_file}`",
        f"{t.proxy} → {t.server}" if t.proxy else t.server,
        t.model,
        f"{t.workers} × {per_worker}",
        "PostgreSQL" if t.database else "no",
        str(t.host_port),
        "–" if t.tutorial_rps is None else f"{t.tutorial_rps:g}",
    ]


def readme_table() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n| scenario | compose file |")
    lines = text[start + 1 :].split("\n\n", 1)[0].splitlines()
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def test_the_readmes_scenario_table_is_the_registry():
    assert readme_table() == [readme_row(t) for t in SCENARIOS]


def test_the_readme_stays_short_and_names_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    assert "make bench" in text and "make test" in text
    # Every other set-up step lives in docs/: no other make target is given to run.
    assert set(re.findall(r"^make (\w+)", text, re.MULTILINE)) == {"bench", "test"}
    for link in re.findall(r"\]\((docs/[\w.-]+\.md)", text):
        assert (ROOT / link).is_file() or link == "docs/results-schema.md", link


def test_a_scale_run_is_titled_with_the_shape_its_override_gives():
    """Gunicorn gevent runs one worker in the tutorial and two in its scale override (a process
    at c=10,000 needs more descriptors than the container may open): a scale run's heading must
    not say "worker x1" with nothing beside it."""
    from playground.bench.plan import Plan

    plan = Plan(
        targets=SCENARIOS, overrides_dir=ROOT / "scale", sweep=(10000,), delays=((10000, 84.5),)
    )
    (load,) = plan.loads(REGISTRY["gunicorn-gevent"])
    assert load.compose_files == ("async-gevent-gunicorn.yml", "scale/async-gevent-gunicorn.yml")
    assert (load.workers, load.per_worker, load.capacity) == (2, 9000, 18000)
    assert load.title == "Gunicorn gevent worker x1; scale override: 2 workers x 9000"
    # An override that leaves the shape alone leaves the title alone.
    (threads,) = plan.loads(REGISTRY["gunicorn-threads"])
    assert threads.title == REGISTRY["gunicorn-threads"].title and threads.workers == 4
    # Without an overrides folder (make bench) nothing changes.
    (bench,) = Plan(targets=SCENARIOS).loads(REGISTRY["gunicorn-gevent"])
    assert bench.title == "Gunicorn gevent worker x1" and bench.overrides == ()

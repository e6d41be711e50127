"""Static checks of the nine compose files, through `docker compose config`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from playground.core import contenders
from playground.core.compose import Docker
from playground.core.scenarios import REGISTRY, SCENARIO_FILES, SCENARIOS
from tests.integration.conftest import ROOT, sh

pytestmark = pytest.mark.integration

FILES = list(SCENARIO_FILES)
# Each file publishes exactly the host ports of the targets the registry puts in it.
HOST_PORTS = {f: {t.host_port for t in SCENARIOS if t.compose_file == f} for f in FILES}
DEMO_TARGETS = [t for t in REGISTRY.values() if t.kind == "demo"]


def config(*compose_files: str) -> dict:
    files = [arg for f in compose_files for arg in ("-f", f)]
    return json.loads(sh("docker", "compose", *files, "config", "--format", "json").stdout)


@pytest.mark.parametrize("compose_file", FILES)
def test_ports_only_on_loopback_and_as_specified(compose_file):
    ports = [p for svc in config(compose_file)["services"].values() for p in svc.get("ports", [])]
    assert {p["host_ip"] for p in ports} == {"127.0.0.1"}
    assert {int(p["published"]) for p in ports} == HOST_PORTS.get(compose_file, {3000})


def published(compose_file: str, env: dict[str, str]) -> set[int]:
    proc = subprocess.run(
        ["docker", "compose", "-f", compose_file, "config", "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    services = json.loads(proc.stdout)["services"].values()
    return {int(p["published"]) for svc in services for p in svc.get("ports", [])}


def test_the_story_lane_publishes_no_port_the_other_lane_does():
    """`make test` runs the story's tests beside the others (tests/lanes.py): the story
    files publish nginx on STORY_PORT (8080, where a reader curls it, unless told otherwise),
    which the tests move to a port no other compose file publishes."""
    story_port = int(os.environ["STORY_PORT"])
    unset = {k: v for k, v in os.environ.items() if k != "STORY_PORT"}
    story_files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "story").glob("*.yml"))
    assert len(story_files) >= 10, story_files
    for compose_file in story_files:
        assert published(compose_file, dict(os.environ)) == {story_port}, compose_file
        assert published(compose_file, unset) == {8080}, compose_file
    others = [
        *FILES,
        *(
            str(p.relative_to(ROOT))
            for d in ("demos", "contenders")
            for p in (ROOT / d).glob("*.yml")
        ),
    ]
    for compose_file in others:
        assert story_port not in published(compose_file, dict(os.environ)), compose_file


@pytest.mark.parametrize("compose_file", FILES)
def test_services_start_together_and_every_dependency_has_a_healthcheck(compose_file):
    """A dependency is only started before its dependant (nginx resolves its upstream's name
    when it starts, so the container must exist), not waited for: `up --wait` waits for every
    service's own health check, and each goes through what the service needs, so the whole
    file is healthy together instead of one level of the chain after another."""
    services = config(compose_file)["services"]
    for name, svc in services.items():
        for dep, cond in svc.get("depends_on", {}).items():
            assert cond["condition"] == "service_started", (name, dep)
            assert "healthcheck" in services[dep], f"{dep} has no healthcheck"


def test_health_checks_look_every_two_seconds_unless_told_otherwise():
    """The benchmarks' 2 s, and the tests' 1 s through HEALTH_INTERVAL (conftest)."""
    for env, expected in (({**os.environ, "HEALTH_INTERVAL": ""}, "2s"), (os.environ, "1s")):
        proc = subprocess.run(
            ["docker", "compose", "-f", "story/uwsgi-threads.yml", "config", "--format", "json"],
            cwd=ROOT,
            env={k: v for k, v in env.items() if v},
            capture_output=True,
            text=True,
            check=True,
        )
        services = json.loads(proc.stdout)["services"]
        assert {s["healthcheck"]["interval"] for s in services.values()} == {expected}


@pytest.mark.parametrize("target", SCENARIOS, ids=lambda t: t.name)
def test_every_loaded_service_has_a_healthcheck(target):
    """`up --wait` waits only for what has a health check: a load must never start against a
    server (nginx included) that is still booting or answering 502."""
    services = config(target.compose_file)["services"]
    for name in (target.service, *target.app_services):
        assert "healthcheck" in services[name], f"{target.compose_file}: {name}"


# The environment variables through which each file sets its server's numbers.
PER_WORKER_VARS = ("THREADS", "ASYNC_CORES", "WORKER_CONNECTIONS")
# ... and every variable that sets a server's shape, Granian's included.
SHAPE_VARS = ("WORKERS", *PER_WORKER_VARS, "GRANIAN_WORKERS", "GRANIAN_BLOCKING_THREADS")


@pytest.mark.parametrize("target", SCENARIOS, ids=lambda t: t.name)
def test_the_registrys_facts_are_the_compose_files(target):
    services = config(target.compose_file)["services"]
    app = services[target.app_services[0]]
    env, command = app.get("environment") or {}, " ".join(app.get("command") or [])
    assert int(env.get("WORKERS", 1)) == target.workers, (target.name, env)
    given = [int(env[v]) for v in PER_WORKER_VARS if v in env]
    if target.server == "Gunicorn" and "gevent" in command and not given:
        given = [1000]  # gunicorn.conf.py's default WORKER_CONNECTIONS
    if target.model == "single":
        assert "--without-threads" in command
    elif target.per_worker is None:
        assert given == [], (target.name, env)
    else:
        assert given == [target.per_worker], (target.name, env)
    # gevent: Gunicorn's gevent worker, gevent.pywsgi, or uWSGI's async cores (uwsgi.ini
    # turns ASYNC_CORES into --gevent).
    gevent = "gevent" in command or "pywsgi" in command or "ASYNC_CORES" in env
    assert gevent == (target.model == "gevent"), (target.name, command, env)
    assert ("postgres" in services) == target.database
    assert (target.service == "ingress") == (target.proxy == "nginx")


# Every target `playground scale` layers a scale/ override on, and that override's file.
SCALED = [
    (t, f"scale/{t.compose_file}")
    for t in (*SCENARIOS, *contenders.SCALE)
    if (ROOT / "scale" / t.compose_file).exists()
]


@pytest.mark.parametrize("target,override", SCALED, ids=lambda v: getattr(v, "name", ""))
def test_the_scale_shape_in_the_registry_is_the_overrides(target, override):
    """The report's headings for a scale run come from the registry: a scale override that
    changes a server's shape (two workers where the scenario runs one) must say so there
    (Target.scale_shape), and one that does not must leave every shape variable alone."""
    scaled = target.at_scale(override)
    assert scaled.compose_files[-1] == override
    service = target.app_services[0]
    env = config(*scaled.compose_files)["services"][service].get("environment") or {}
    if target.scale_shape is None:
        before = config(*target.compose_files)["services"][service].get("environment") or {}
        shape = [v for v in env if v in SHAPE_VARS]
        assert {v: env[v] for v in shape} == {v: before.get(v) for v in shape}, target.name
        assert scaled.title == target.title
        return
    workers, per_worker = target.scale_shape
    assert int(env["WORKERS"]) == workers == scaled.workers, (target.name, env)
    if per_worker is not None:
        assert [int(env[v]) for v in PER_WORKER_VARS if v in env] == [per_worker], env
    assert scaled.title.endswith(
        f"scale override: {workers} workers" + ("" if per_worker is None else f" x {per_worker}")
    )


@pytest.mark.parametrize("target", [*SCENARIOS, *DEMO_TARGETS], ids=lambda t: t.name)
def test_project_and_network_come_from_the_file_not_its_stem(target):
    """The demos' projects are `demo-*`, not their files' stems: the runner's recorded load
    commands (a failed demo's too) name the network `Docker.network` gives."""
    project = config(target.compose_file)["name"]
    assert Docker(root=ROOT).network(target.compose_files) == f"{project}_default"
    if target.kind == "demo":
        assert project != Path(target.compose_file).stem


@pytest.mark.parametrize("compose_file", FILES)
def test_no_version_key_and_slow_api_defined_once(compose_file):
    text = open(compose_file).read()
    assert not any(line.startswith("version:") for line in text.splitlines())
    # slow_api's definition lives in compose/common.yml; the file only extends it.
    assert "build:" not in text


@pytest.mark.parametrize("compose_file", FILES)
def test_app_containers_run_as_non_root(compose_file):
    for name, svc in config(compose_file)["services"].items():
        if name == "postgres":
            continue  # its entry point drops to the postgres user itself
        image = svc["image"]
        user = (
            svc.get("user")
            or sh(
                "docker", "image", "inspect", "--format", "{{.Config.User}}", image, check=False
            ).stdout.strip()
        )
        assert user and user not in ("root", "0", "0:0"), (name, image, user)


@pytest.mark.parametrize("compose_file", FILES)
def test_postgres_is_never_published(compose_file):
    services = config(compose_file)["services"]
    for name, svc in services.items():
        if "postgres" in name or "postgres" in svc.get("image", ""):
            assert not svc.get("ports"), (compose_file, name, svc["ports"])


# --- no credentials but the documented example ones ----------------------------------------
# The playground's only credentials are postgres's documented `example` user and password.
ALLOWED_VALUES = {"example", ""}
KEY = "PRIVATE" + " KEY"  # spelled apart so this file does not match its own pattern
SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN (?:[A-Z]+ )?" + KEY + "-----"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    "JSON web token": re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\."),
}
NAMED = r"[\w.-]*(?:passw(?:or)?d|secret|token|api[_-]?key|credential)[\w.-]*"
VALUE_PATTERNS = (
    # a quoted value given to a password, secret, token or API key, in any syntax
    re.compile(rf"(?i)\b{NAMED}[\"']?\s*[:=]\s*[\"']([^\"'\n]*)[\"']"),
    # a bare value at the end of a YAML, .env or ini line
    re.compile(rf"(?im)^\s*-?\s*{NAMED}\s*[:=]\s*([^\s#\"']+)\s*$"),
    # user:password@ in a URL
    re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:([^/\s@\"']+)@"),
)


def credential_findings(text: str) -> list[str]:
    found = [name for name, pattern in SECRET_PATTERNS.items() if pattern.search(text)]
    for pattern in VALUE_PATTERNS:
        for match in pattern.finditer(text):
            value = match.group(1)
            # Variables ($X, ${X}, %(x)s, {{x}}) and code ({, [, () are not values.
            if value not in ALLOWED_VALUES and not value.startswith(("$", "%(", "{", "[", "(")):
                found.append(match.group(0).strip()[:80])
    return found


def test_the_credentials_scan_finds_what_it_looks_for():
    # Assembled at run time, so this file itself stays clean for the scan below.
    planted = [
        "db_pass" + 'word = "hunter2"',
        "API_" + "KEY=abc123",
        "postgres://app:" + "s3cret@db/x",
        "-----BEGIN RSA " + KEY + "-----",
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "  SECRET_" + "TOKEN: hunter2",
    ]
    for text in planted:
        assert credential_findings(text), text
    for text in [
        "POSTGRES_PASSWORD: example",
        '"password": os.environ.get("X", "example")',
        "password: ${POSTGRES_PASSWORD}",
        "-----BEGIN CERTIFICATE-----",
    ]:
        assert not credential_findings(text), text


def repository_files() -> list[str]:
    listed = sh("git", "ls-files", "--cached", "--others", "--exclude-standard").stdout
    return sorted({f for f in listed.splitlines() if f})


def test_no_credentials_in_the_repository():
    findings = {}
    for rel in repository_files():
        path = ROOT / rel
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # binary (charts): nothing to read
        if hits := credential_findings(text):
            findings[rel] = hits
    assert not findings, findings


def image_findings(image: str) -> list[str]:
    inspect = sh(
        "docker",
        "image",
        "inspect",
        "--format",
        "{{json .Config.Env}}\t{{json .Config.Labels}}",
        image,
        check=False,
    )
    assert inspect.returncode == 0, f"{image} is not there: {inspect.stderr}"
    env_json, labels_json = inspect.stdout.strip().split("\t")
    pairs = [tuple(e.split("=", 1)) for e in json.loads(env_json) or []]
    pairs += list((json.loads(labels_json) or {}).items())
    named = re.compile(rf"(?i)^{NAMED}$")
    bad = [f"{k}={v}" for k, v in pairs if named.match(k) and v not in ALLOWED_VALUES]
    bad += [
        f"{k}={v[:40]}" for k, v in pairs if credential_findings(f"{k}={v}") and not named.match(k)
    ]
    # Build arguments and RUN lines stay in the image's history.
    history = sh("docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", image).stdout
    return bad + credential_findings(history)


@pytest.mark.parametrize("compose_file", [*FILES, "compose/loadgen.yml"])
def test_no_credentials_in_the_images(compose_file):
    images = sorted({svc["image"] for svc in config(compose_file)["services"].values()})
    for image in images:
        present = sh("docker", "image", "inspect", image, check=False).returncode == 0
        if not present and not image.startswith("flask-playground/"):
            continue  # an official image not pulled yet: nothing of ours is in it
        assert not image_findings(image), (image, image_findings(image))

"""Static checks of the nine compose files, through `docker compose config`."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import sh

pytestmark = pytest.mark.integration

FILES = ["sync-devserver.yml", "async-gevent-pywsgi.yml", "sync-gunicorn.yml",
         "async-gevent-gunicorn.yml", "sync-uwsgi.yml", "async-gevent-uwsgi.yml",
         "nginx-gunicorn.yml", "nginx-uwsgi.yml", "bonus-psycopg2-gevent.yml"]
HOST_PORTS = {"sync-devserver.yml": {3000, 3001}, "bonus-psycopg2-gevent.yml": {3000, 3001},
              "nginx-gunicorn.yml": {8080}, "nginx-uwsgi.yml": {8080}}


def config(compose_file: str) -> dict:
    return json.loads(sh("docker", "compose", "-f", compose_file, "config", "--format",
                         "json").stdout)


@pytest.mark.parametrize("compose_file", FILES)
def test_ports_only_on_loopback_and_as_specified(compose_file):
    ports = [p for svc in config(compose_file)["services"].values() for p in svc.get("ports", [])]
    assert {p["host_ip"] for p in ports} == {"127.0.0.1"}
    assert {int(p["published"]) for p in ports} == HOST_PORTS.get(compose_file, {3000})


@pytest.mark.parametrize("compose_file", FILES)
def test_every_dependency_is_waited_for_healthy(compose_file):
    services = config(compose_file)["services"]
    for name, svc in services.items():
        for dep, cond in svc.get("depends_on", {}).items():
            assert cond["condition"] == "service_healthy", (name, dep)
            assert "healthcheck" in services[dep], f"{dep} has no healthcheck"


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
        user = svc.get("user") or sh("docker", "image", "inspect", "--format",
                                     "{{.Config.User}}", image, check=False).stdout.strip()
        assert user and user not in ("root", "0", "0:0"), (name, image, user)

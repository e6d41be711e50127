"""The stack file made from `docker compose config`: a hand-written copy of what Compose
prints for story/gunicorn-threads.yml with the Gunicorn bounded-queue remedy over it, on a
machine whose .env names the base images built from Debian (docs/offline-images.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.core.errors import UsageError
from playground.swarm.stack import Stack, pushed_image, stack_from_config

CONFIG = json.loads(
    (
        Path(__file__).parents[1] / "data" / "compose_config_story_gunicorn_bounded_queue.json"
    ).read_text()
)


def stack(replicas: int = 3) -> Stack:
    return stack_from_config(
        config=CONFIG, registry="127.0.0.1:5000", tag="run1", app="flask_app", replicas=replicas
    )


def test_built_images_come_from_the_registry_under_the_runs_tag() -> None:
    services = stack().document["services"]
    assert services["flask_app"]["image"] == "127.0.0.1:5000/flask-playground/flask_app:run1"
    assert services["slow_api"]["image"] == "127.0.0.1:5000/flask-playground/slow_api:run1"
    # A base image keeps its own tag: every node pulls it from the same registry.
    assert services["ingress"]["image"] == "127.0.0.1:5000/flask-playground-base/nginx:trixie"
    assert stack().images["flask-playground/flask_app"].endswith("/flask_app:run1")
    assert all("build" not in s for s in services.values())


def test_only_the_app_is_replicated_and_every_service_resolves_by_dns() -> None:
    services = stack(replicas=4).document["services"]
    assert stack(replicas=4).replicas == {
        "flask_app": 4,
        "ingress": 1,
        "slow_api": 1,
    }
    assert {s["deploy"]["endpoint_mode"] for s in services.values()} == {"dnsrr"}


def test_ports_are_published_on_the_host_and_the_lost_address_is_said() -> None:
    s = stack()
    assert s.document["services"]["ingress"]["ports"] == [
        {"target": 8080, "protocol": "tcp", "published": 8080, "mode": "host"}
    ]
    assert s.front_port == 8080  # where the runner asks for its first page
    said = [r.text() for r in s.removed if r.key == "ports.host_ip"]
    assert said == [
        "ingress: ports.host_ip removed (Swarm publishes on every address of the node, "
        "not 127.0.0.1 alone)"
    ]


def test_what_swarm_cannot_use_is_removed_and_listed() -> None:
    s = stack()
    removed = {(r.service, r.key) for r in s.removed}
    assert removed == {
        ("flask_app", "build"),
        ("flask_app", "depends_on"),
        ("flask_app", "dns_opt"),
        ("flask_app", "sysctls"),
        ("ingress", "depends_on"),
        ("ingress", "ports.host_ip"),
        ("slow_api", "build"),
    }
    for name, service in s.document["services"].items():
        left = {k for k in ("build", "depends_on", "sysctls", "dns_opt") if k in service}
        assert left == set(), name
    assert "name" not in s.document


def test_ulimits_and_capabilities_go_too() -> None:
    config = {
        "services": {
            "app": {"image": "x", "ulimits": {"nofile": 1024}, "cap_add": ["NET_ADMIN"]},
        }
    }
    s = stack_from_config(config=config, registry="r:1", tag="t", app="app", replicas=1)
    assert [(r.key, r.why) for r in s.removed] == [
        ("cap_add", "Swarm does not honour it"),
        ("ulimits", "Swarm does not honour it"),
    ]
    assert s.document["networks"] == {"default": {"driver": "overlay", "attachable": True}}


def test_a_mounted_file_travels_as_a_config() -> None:
    s = stack()
    ingress = s.document["services"]["ingress"]
    assert "volumes" not in ingress
    assert ingress["configs"] == [
        {"source": "ingress_playground_conf", "target": "/etc/nginx/playground.conf"}
    ]
    assert s.document["configs"] == {
        "ingress_playground_conf": {"file": "/path/to/flask-playground/story/nginx-http.conf"}
    }


def test_the_network_is_an_attachable_overlay() -> None:
    assert stack().document["networks"] == {"default": {"driver": "overlay", "attachable": True}}


def test_an_app_not_in_the_files_is_refused() -> None:
    with pytest.raises(UsageError, match="no service 'app'"):
        stack_from_config(config=CONFIG, registry="r:1", tag="t", app="app", replicas=1)


@pytest.mark.parametrize(
    ("image", "tag", "pushed"),
    [
        ("flask-playground/flask_app", "run1", "r:5000/flask-playground/flask_app:run1"),
        ("nginx:1.28.0", None, "r:5000/nginx:1.28.0"),
        ("nginx", None, "r:5000/nginx:latest"),
        ("localhost:5001/base/nginx", None, "r:5000/localhost:5001/base/nginx:latest"),
    ],
)
def test_pushed_image_names(image: str, tag: str | None, pushed: str) -> None:
    assert pushed_image(image, registry="r:5000", tag=tag) == pushed


def test_services_start_in_their_depends_on_order() -> None:
    """nginx resolves its upstream when it starts: it comes last, the app before it, the
    third party first; every later level is deployed at 0 replicas and scaled up by the
    runner."""
    s = stack(replicas=3)
    assert s.levels == [["slow_api"], ["flask_app"], ["ingress"]]
    deployed = {n: v["deploy"]["replicas"] for n, v in s.document["services"].items()}
    assert deployed == {"slow_api": 1, "flask_app": 0, "ingress": 0}
    assert s.replicas == {"slow_api": 1, "flask_app": 3, "ingress": 1}


def test_a_circle_of_depends_on_is_refused() -> None:
    config = {
        "services": {
            "a": {"image": "x", "depends_on": {"b": {"condition": "service_started"}}},
            "b": {"image": "y", "depends_on": {"a": {"condition": "service_started"}}},
        }
    }
    with pytest.raises(UsageError, match="circle"):
        stack_from_config(config=config, registry="r:1", tag="t", app="a", replicas=1)


def test_a_key_compose_wrote_as_null_is_left_out() -> None:
    """`docker compose config` writes `entrypoint: null`; the stack file's schema refuses a
    null where it wants a string or a list."""
    config = {
        "services": {
            "a": {"image": "x", "entrypoint": None, "command": None, "networks": {"default": None}}
        }
    }
    service = stack_from_config(config=config, registry="r:1", tag="t", app="a", replicas=1)
    out = service.document["services"]["a"]
    assert "entrypoint" not in out and "command" not in out
    assert out["networks"] == ["default"]

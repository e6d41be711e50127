"""From `docker compose config --format json` to a stack file for `docker stack deploy -c`.

Swarm takes a compose file with differences (docs/cluster.md): it ignores `build`, so every
image comes from a registry; it rejects `depends_on` with conditions and does not wait on
health checks, so the runner waits for readiness itself; it does not honour `ulimits`,
`sysctls`, `cap_add` and more, so those go and the command says so. The routing mesh
balances with IPVS in front of the project's own proxy, and this kernel has none: ports are
published in host mode and services resolve by DNS round robin (`endpoint_mode: dnsrr`), so
the proxy alone balances. The network is an attachable overlay, which the senders join.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from playground.core.errors import UsageError

#: The stack file's format: `docker stack deploy` reads the version 3 schema, which has no
#: `name`, no `depends_on` conditions and no `dns_opt`.
STACK_VERSION = "3.9"
#: What a service in the stack keeps: the keys Swarm honours. Everything else is removed and
#: listed, with the reason from REASONS or IGNORED.
KEPT = frozenset(
    {
        "command",
        "configs",
        "deploy",
        "dns",
        "dns_search",
        "entrypoint",
        "environment",
        "extra_hosts",
        "healthcheck",
        "hostname",
        "image",
        "init",
        "labels",
        "logging",
        "networks",
        "ports",
        "read_only",
        "secrets",
        "stop_grace_period",
        "stop_signal",
        "user",
        "volumes",
        "working_dir",
    }
)
REASONS = {
    "build": "Swarm does not build: the image is pushed to the registry",
    "depends_on": "Swarm rejects conditions: the runner starts the services in its order",
    "dns_opt": "not in the stack file's schema: the resolver keeps its defaults",
}
#: Why any other key goes.
IGNORED = "Swarm does not honour it"


@dataclass(frozen=True)
class Removed:
    """One setting of the compose files that the stack does not carry."""

    service: str
    key: str
    why: str

    def text(self) -> str:
        return f"{self.service}: {self.key} removed ({self.why})"


@dataclass(frozen=True)
class Stack:
    """A stack file and what making it changed."""

    document: dict[str, Any]  # for `docker stack deploy -c`, as JSON (YAML's superset)
    removed: list[Removed]
    images: dict[str, str]  # each local image -> the name it is pushed and deployed as
    app: str  # the service replicated
    # The services in the order their depends_on asked for: the first level deploys with its
    # replicas, every later one at 0, scaled up by the runner once the one before is running.
    levels: list[list[str]]
    replicas: dict[str, int]  # each service's replicas once it is up
    front_port: int | None  # the port the front (the service that publishes one) is reached on
    front: str | None = None  # that service


def pushed_image(image: str, *, registry: str, tag: str | None) -> str:
    """`image` in `registry`: a built image (no tag of its own) under the run's `tag`, a base
    image (nginx:1.28.0) under its own."""
    path, colon, own = image.rpartition(":")
    if not colon or "/" in own:  # no tag: the colon, if any, was a registry's port
        path, own = image, ""
    return f"{registry}/{path}:{tag or own or 'latest'}"


def _config_name(service: str, target: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{service}_{PurePosixPath(target).name}")


def _volumes(
    service: str, volumes: list[dict[str, Any]], configs: dict[str, dict[str, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """A read-only bind mount of one file becomes a Swarm config (the file travels with the
    stack to whichever node runs the task); any other volume stays."""
    kept, mounted = [], []
    for volume in volumes:
        if volume.get("type") == "bind" and volume.get("read_only"):
            name = _config_name(service, volume["target"])
            configs[name] = {"file": volume["source"]}
            mounted.append({"source": name, "target": volume["target"]})
        else:
            kept.append(volume)
    return kept, mounted


def _ports(service: str, ports: list[dict[str, Any]], removed: list[Removed]) -> list[Any]:
    out = []
    for port in ports:
        if port.get("host_ip"):
            why = f"Swarm publishes on every address of the node, not {port['host_ip']} alone"
            removed.append(Removed(service, "ports.host_ip", why))
        entry = {"target": int(port["target"]), "protocol": port.get("protocol", "tcp")}
        if port.get("published") not in (None, ""):
            entry["published"] = int(port["published"])
        out.append({**entry, "mode": "host"})
    return out


def _service(
    name: str,
    spec: Mapping[str, Any],
    *,
    image: str,
    replicas: int,
    removed: list[Removed],
    configs: dict[str, dict[str, str]],
) -> dict[str, Any]:
    for key in sorted(set(spec) - KEPT):
        removed.append(Removed(name, key, REASONS.get(key, IGNORED)))
    # `docker compose config` writes a key it has no value for as null (no entrypoint of the
    # file's own); the stack file's schema refuses a null, and leaving it out means the same.
    out = {k: v for k, v in spec.items() if k in KEPT and v is not None}
    if isinstance(out.get("networks"), dict):
        out["networks"] = {n: v for n, v in out["networks"].items() if v} or list(out["networks"])
    out["image"] = image
    if "ports" in out:
        out["ports"] = _ports(name, out["ports"], removed)
    if "volumes" in out:
        volumes, mounted = _volumes(name, out["volumes"], configs)
        out.pop("volumes")
        if volumes:
            out["volumes"] = volumes
        out["configs"] = [*out.get("configs", []), *mounted]
    out["deploy"] = {
        **out.get("deploy", {}),
        "replicas": replicas,
        "endpoint_mode": "dnsrr",
        # A task that stops stays stopped: a replica restarted mid-run would hide a failure
        # the run must record.
        "restart_policy": {"condition": "none"},
    }
    return out


def _levels(services: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """The services level by level: each after every service it depends on (nginx resolves
    its upstream when it starts, so it cannot start before the app)."""
    needs = {n: set(spec.get("depends_on") or ()) & set(services) for n, spec in services.items()}
    levels: list[list[str]] = []
    placed: set[str] = set()
    while len(placed) < len(needs):
        level = sorted(n for n, d in needs.items() if n not in placed and d <= placed)
        if not level:
            raise UsageError(f"depends_on goes round in a circle: {', '.join(set(needs) - placed)}")
        levels.append(level)
        placed |= set(level)
    return levels


def stack_from_config(
    *,
    config: Mapping[str, Any],
    registry: str,
    tag: str,
    app: str,
    replicas: int,
    app_constraint: str | None = None,
) -> Stack:
    """The stack for `docker stack deploy -c` from `docker compose config --format json`:
    every image from `registry` (built ones under `tag`), `replicas` of the service `app`
    (placed by `app_constraint` when there is one), ports in host mode, DNS round robin, one
    attachable overlay network; and what went."""
    services: Mapping[str, Mapping[str, Any]] = config.get("services") or {}
    if app not in services:
        raise UsageError(f"no service {app!r} in the compose files: {', '.join(services)}")
    removed: list[Removed] = []
    configs: dict[str, dict[str, str]] = {}
    images: dict[str, str] = {}
    out: dict[str, Any] = {}
    levels = _levels(services)
    counts = {name: replicas if name == app else 1 for name in services}
    for name, spec in services.items():
        local = spec.get("image") or f"{config.get('name', 'stack')}-{name}"
        images[local] = pushed_image(local, registry=registry, tag=tag if "build" in spec else None)
        out[name] = _service(
            name,
            spec,
            image=images[local],
            replicas=counts[name] if name in levels[0] else 0,
            removed=removed,
            configs=configs,
        )
        if name == app and app_constraint is not None:
            placement = {"constraints": [app_constraint]}
            out[name]["deploy"] = {**out[name]["deploy"], "placement": placement}
    networks = {
        name: {"driver": "overlay", "attachable": True} for name in config.get("networks") or {}
    } or {"default": {"driver": "overlay", "attachable": True}}
    document: dict[str, Any] = {"version": STACK_VERSION, "services": out, "networks": networks}
    if configs:
        document["configs"] = configs
    return Stack(
        document=document,
        removed=removed,
        images=images,
        app=app,
        levels=levels,
        replicas=counts,
        front_port=next(
            (p["published"] for v in out.values() for p in v.get("ports", []) if "published" in p),
            None,
        ),
        front=next(
            (n for n, v in out.items() if any("published" in p for p in v.get("ports", []))),
            None,
        ),
    )

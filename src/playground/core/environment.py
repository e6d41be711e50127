"""What a result was measured on, pyperf-style, so two runs can be compared honestly."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from playground.core.compose import LOADGEN_IMAGE, OPENLOOP_IMAGE, Docker
from playground.core.results import Environment

IMAGES = (
    "flask-playground/flask_app",
    "flask-playground/bonus",
    "flask-playground/slow_api",
    LOADGEN_IMAGE,
)
#: The story's runs add its generator's image.
STORY_IMAGES = (*IMAGES, OPENLOOP_IMAGE)
PACKAGE_FILES = (
    "flask_app/requirements.txt",
    "psycopg2/requirements.txt",
    "slow_api/requirements.txt",
)


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def packages(root: Path) -> dict[str, str]:
    """Pinned versions inside the images, read from the lock files they were built from."""
    found: dict[str, str] = {}
    for rel in PACKAGE_FILES:
        path = root / rel
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                found[name.split("[", 1)[0].lower()] = version.strip()
    return found


def base_images(root: Path) -> dict[str, str]:
    env_file = root / ".env"
    images = {}
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.split("=", 1)
                images[key.strip()] = value.strip()
    return images or {"base_images": "official (no .env)"}


def collect(
    *,
    root: Path,
    docker: Docker,
    tool: str,
    tool_version: str | None,
    images: tuple[str, ...] = IMAGES,
) -> Environment:
    """A measured run's environment, as results.json keeps it (``RunHeader.environment``)."""
    status = _git(root, "status", "--porcelain")
    versions = docker.versions()
    return Environment(
        git_commit=_git(root, "rev-parse", "HEAD"),
        git_dirty=bool(status) if status is not None else None,
        cpu_count=os.cpu_count(),
        kernel=platform.release(),
        platform=platform.platform(),
        python=platform.python_version(),
        docker_version=versions["docker_version"],
        compose_version=versions["compose_version"],
        load_tool=tool,
        load_tool_version=tool_version,
        images=docker.image_ids(images),
        base_images=base_images(root),
        packages=packages(root),
        hostname=platform.node(),
    )


def docker_only(docker: Docker) -> Environment:
    """A fault run's environment: the CPUs and Docker's versions (what it has always kept)."""
    versions = docker.versions()
    return Environment(
        cpu_count=os.cpu_count(),
        docker_version=versions["docker_version"],
        compose_version=versions["compose_version"],
    )


def model_only() -> Environment:
    """A prediction's environment: nothing is measured, so the CPUs and Python only."""
    return Environment(cpu_count=os.cpu_count(), python=platform.python_version())

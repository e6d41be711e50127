"""Every by-hand `docker compose -f FILE ...` command the docs print works as written.

Where the root `.env` names local stand-ins for the base images (`make offline-images`, no
registry reachable), a command typed from the repository root must build FROM them, whichever
folder its first file is in: Compose reads `.env` from that folder, not from the current one.
Each command is resolved with `docker compose ... config`, which needs no image and starts
nothing, from the root, with the same options in the same order.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
# The registry images the compose files fall back on when .env names none.
OFFICIAL = re.compile(r"^(?:docker\.io/)?(?:library/)?(?:python|nginx|postgres|debian):")
# A command printed for any file ("docker compose -f FILE up"), not one to type as it is.
PLACEHOLDER = re.compile(r"^[A-Z]+(?:\.yml)?$")
# Compose's options before the subcommand, and whether each takes a value.
GLOBAL_OPTIONS = {
    "-f": True,
    "--file": True,
    "--env-file": True,
    "-p": True,
    "--project-name": True,
    "--project-directory": True,
    "--profile": True,
    "--ansi": True,
    "--progress": True,
    "--parallel": True,
    "--compatibility": False,
    "--dry-run": False,
}


def sources() -> list[Path]:
    """Where a reader finds commands to type: the Markdown pages and the compose files'
    own comments."""
    listed = subprocess.run(
        ["git", "ls-files", "*.md", "*.yml"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    return [ROOT / name for name in listed]


def commands_in(text: str) -> list[str]:
    """Each `docker compose ...` in a text, up to the end of its line (a trailing backslash
    continues it), a closing backtick or a table cell's edge."""
    text = re.sub(r"\\\n\s*", " ", text)
    return [m.group(0).strip() for m in re.finditer(r"docker compose[^`|\n]*", text)]


def files_of(options: list[str] | tuple[str, ...]) -> list[str]:
    return [value for option, value in itertools.pairwise(options) if option in ("-f", "--file")]


def global_options(command: str) -> list[str] | None:
    """The options before the subcommand (`-f`, `--env-file`, ...) as written, or None where
    the command names no compose file or only a placeholder."""
    # Word by word, as a shell splits them: only the words before the subcommand are read,
    # so a quote the line leaves open further on (a command going on in the text) is no matter.
    lexer = shlex.shlex(command, posix=True)
    lexer.whitespace_split = True
    words = iter(lexer)
    assert [next(words), next(words)] == ["docker", "compose"]
    options: list[str] = []
    for word in words:
        if word not in GLOBAL_OPTIONS:
            break
        options.append(word)
        if GLOBAL_OPTIONS[word]:
            options.append(next(words, ""))
    files = files_of(options)
    if not files or any(PLACEHOLDER.match(f) for f in files):
        return None
    return options


def by_hand_commands() -> dict[tuple[str, ...], str]:
    """Every distinct set of options a by-hand command passes, with where it was first seen."""
    found: dict[tuple[str, ...], str] = {}
    for path in sources():
        for command in commands_in(path.read_text(encoding="utf-8")):
            options = global_options(command)
            if options is not None:
                found.setdefault(tuple(options), f"{path.relative_to(ROOT)}: {command}")
    return found


COMMANDS = by_hand_commands()


def root_env() -> dict[str, str]:
    values = {}
    for line in (ROOT / ".env").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


def test_the_docs_commands_are_all_found() -> None:
    files = {value for options in COMMANDS for value in options}
    for expected in (
        "sync-devserver.yml",
        "story/uwsgi-threads.yml",
        "demos/sanic.yml",
        "contenders/granian-wsgi.yml",
        "scale/async-gevent-uwsgi.yml",
    ):
        assert expected in files


def test_a_placeholder_or_an_option_free_command_is_not_one_to_check() -> None:
    assert global_options("docker compose -f FILE up --build --wait") is None
    assert global_options("docker compose stop slow_api") is None
    assert global_options(
        "docker compose --env-file .env -f demos/sanic.yml up --build --wait  # a comment"
    ) == ["--env-file", ".env", "-f", "demos/sanic.yml"]


@pytest.mark.parametrize("options", list(COMMANDS), ids=lambda o: " ".join(o))
def test_a_by_hand_command_builds_from_the_roots_base_images(options: tuple[str, ...]) -> None:
    if not (ROOT / ".env").is_file():
        pytest.skip(
            "no .env at the repository root: every command builds FROM the official images, "
            "so there are no local stand-ins to resolve to"
        )
    if shutil.which("docker") is None:
        pytest.skip("docker is not installed")
    where = COMMANDS[options]
    for compose_file in files_of(options):
        assert (ROOT / compose_file).is_file(), f"{where}: {compose_file} does not exist"
    proc = subprocess.run(
        ["docker", "compose", *options, "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, f"{where}\n{proc.stderr}"
    env = root_env()
    stand_ins = set(env.values())
    resolved: list[str] = []
    for name, service in json.loads(proc.stdout)["services"].items():
        args = (service.get("build") or {}).get("args") or {}
        for key, value in args.items():
            if key in env:
                assert value == env[key], f"{where}: {name}'s build arg {key}={value}"
                resolved.append(value)
        image = service.get("image") or ""
        assert not OFFICIAL.match(image), f"{where}: {name} runs the official {image}"
        if image in stand_ins:
            resolved.append(image)
    assert resolved, f"{where}: no service resolves to a base image named in .env"

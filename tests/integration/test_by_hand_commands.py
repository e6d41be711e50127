"""Every by-hand `docker compose -f FILE ...` command the docs print works as written.

Where the root `.env` names local stand-ins for the base images (`make offline-images`, no
registry reachable), a command typed from the repository root must build FROM them, whichever
folder its first file is in: Compose reads `.env` from that folder, not from the current one.
Where there is no `.env` (a clone on a machine that reaches a registry), it must build FROM the
official images the compose files name. Each command is resolved both ways, in two copies of
the repository's files made for the test (one with a `.env` of stand-ins and its folders'
links, as `offline/link-env.sh` makes them; one without), whatever this checkout has, with
`docker compose ... config`, which needs no image and starts nothing, from the copy's root,
with the same options in the same order.
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


def official_defaults() -> dict[str, str]:
    """Each base image variable and the official image a compose file falls back on."""
    found: dict[str, str] = {}
    for path in sources():
        if path.suffix == ".yml":
            found.update(re.findall(r"\$\{([A-Z_]+_IMAGE):-([^}]+)\}", path.read_text()))
    return found


DEFAULTS = official_defaults()
# What `make offline-images` writes into .env, with names of the test's own: nothing is built.
STAND_INS = {key: f"local-stand-in/{key.lower()}:test" for key in DEFAULTS}


def copy_of_the_repository(dest: Path, *, env: dict[str, str] | None) -> Path:
    """The repository's tracked files under `dest`; with `env`, a root .env of it and every
    folder's link to it (offline/link-env.sh, run in the copy)."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    if env is not None:
        (dest / ".env").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        linked = subprocess.run(
            ["bash", "offline/link-env.sh"], cwd=dest, capture_output=True, text=True
        )
        assert linked.returncode == 0, linked.stderr
    return dest


@pytest.fixture(scope="module", params=["with .env", "without .env"])
def checkout(request, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A copy of the repository and the base images every command must resolve to in it."""
    with_env = request.param == "with .env"
    root = copy_of_the_repository(
        tmp_path_factory.mktemp("checkout"), env=STAND_INS if with_env else None
    )
    return root, STAND_INS if with_env else DEFAULTS


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


def test_every_base_image_has_an_official_default() -> None:
    assert set(DEFAULTS) >= {"PYTHON_IMAGE", "PYTHON_BUILD_IMAGE", "NGINX_IMAGE"}, DEFAULTS
    assert all(OFFICIAL.match(image) for image in DEFAULTS.values()), DEFAULTS


@pytest.mark.parametrize("options", list(COMMANDS), ids=lambda o: " ".join(o))
def test_a_by_hand_command_builds_from_the_roots_base_images(
    options: tuple[str, ...], checkout: tuple[Path, dict[str, str]]
) -> None:
    root, expected = checkout
    where = COMMANDS[options]
    for compose_file in files_of(options):
        assert (root / compose_file).is_file(), f"{where}: {compose_file} does not exist"
    proc = subprocess.run(
        ["docker", "compose", *options, "config", "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    env_file = dict(itertools.pairwise(options)).get("--env-file")
    if env_file is not None and not (root / env_file).is_file():
        # A command that names the .env cannot run without one, and says which file it lacks.
        assert proc.returncode != 0 and env_file in proc.stderr, f"{where}\n{proc.stderr}"
        return
    assert proc.returncode == 0, f"{where}\n{proc.stderr}"
    resolved: list[str] = []
    for name, service in json.loads(proc.stdout)["services"].items():
        args = (service.get("build") or {}).get("args") or {}
        for key, value in args.items():
            if key in expected:
                assert value == expected[key], f"{where}: {name}'s build arg {key}={value}"
                resolved.append(value)
        image = service.get("image") or ""
        if expected is STAND_INS:
            assert not OFFICIAL.match(image), f"{where}: {name} runs the official {image}"
        if image in expected.values():
            resolved.append(image)
    assert resolved, (
        f"{where}: no service resolves to a base image {sorted(set(expected.values()))}"
    )

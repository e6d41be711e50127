"""The one place that shells out to `docker` and `docker compose`.

Every command goes through `Docker.run`, which hands it to an `echo` callback first, so the
runner can print the exact line a reader would type to repeat any step by hand.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from playground.core.containerstate import WAIT_TIMEOUT_S, ContainerState
from playground.core.errors import PlaygroundError
from playground.core.pinning import CpuPinning
from playground.core.signals import deferred_signals

LOADGEN_IMAGE = "flask-playground/loadgen"
#: The war story's generator: the load tools plus openloop.py and its compiled sender.
OPENLOOP_IMAGE = "flask-playground/openloop"
#: compose/loadgen.yml's services, one per image: what a bench needs, and the story's generator.
LOADGEN_SERVICES = ("loadgen",)
STORY_LOADGEN_SERVICES = ("loadgen", "openloop")
LOADGEN_COMPOSE = "compose/loadgen.yml"
DELAY_PROXY_IMAGE = "flask-playground/delayproxy"
DELAY_PROXY_COMPOSE = "delayproxy/compose.yml"
# On every delay proxy (value: RUN/PID), so one left by a killed command is found and removed.
DELAY_PROXY_LABEL = "flask-playground.delay-proxy"
# A compose file, or a file with its overrides (`-f FILE -f OVERRIDE ...`).
ComposeFiles = str | Sequence[str]


class DockerError(PlaygroundError, RuntimeError):
    """A docker command failed; the message is meant for a person (no traceback)."""


def shown(argv: Sequence[str]) -> str:
    return shlex.join(argv)


@dataclass
class Docker:
    root: Path
    echo: Callable[[str], None] = lambda line: None
    # Commands are printed relative to the repository root, the way a reader types them.
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    # --pin-cpus: the load generator and the app's containers on separate cores (None: free).
    pinning: CpuPinning | None = None
    _projects: dict[tuple[str, ...], str] = field(default_factory=dict, init=False, repr=False)

    # --- plumbing -------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        check: bool = True,
        quiet: bool = False,
        timeout: float | None = None,
        shielded: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Run one docker command. `shielded` (teardown): neither a signal to this process
        nor a Ctrl-C in the terminal (its own session) can stop the command half-way."""
        if not quiet:
            self.echo(shown(argv))
        try:
            with deferred_signals() if shielded else nullcontext():
                proc = subprocess.run(
                    list(argv),
                    cwd=self.root,
                    env=self.env,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    start_new_session=shielded,
                )
        except FileNotFoundError as exc:
            raise DockerError(f"{argv[0]} is not installed or not on PATH") from exc
        except subprocess.TimeoutExpired as exc:
            raise DockerError(f"timed out after {timeout:g} s: {shown(argv)}") from exc
        if check and proc.returncode != 0:
            raise DockerError(f"failed ({proc.returncode}): {shown(argv)}\n{tail(proc)}")
        return proc

    def compose(self, compose_file: ComposeFiles, *args: str) -> list[str]:
        """`docker compose -f FILE [-f OVERRIDE ...] ARGS`; a file may come with overrides."""
        files = [compose_file] if isinstance(compose_file, str) else list(compose_file)
        # Compose reads .env from the first file's folder: one below the root (demos/) needs
        # the root's named, or it would build FROM the official images even offline.
        env = self.env_file_args() if Path(files[0]).parent != Path(".") else []
        return ["docker", "compose", *env, *[a for f in files for a in ("-f", f)], *args]

    # --- preflight ------------------------------------------------------------------------
    def preflight(self) -> None:
        """Docker reachable and Compose v2 present, or a clear sentence saying which is not."""
        info = self.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            check=False,
            quiet=True,
            timeout=30,
        )
        if info.returncode != 0:
            raise DockerError(
                "Docker is not running or not reachable (docker info: "
                f"{last_line(info) or 'no answer'}). Start the Docker daemon and try again."
            )
        version = self.run(
            ["docker", "compose", "version", "--short"], check=False, quiet=True, timeout=30
        )
        if version.returncode != 0:
            legacy = (
                self.run(
                    ["docker-compose", "version", "--short"], check=False, quiet=True, timeout=30
                )
                if _which("docker-compose")
                else None
            )
            hint = (
                f" (found only docker-compose {legacy.stdout.strip()}, which is Compose v1)"
                if legacy is not None and legacy.returncode == 0
                else ""
            )
            raise DockerError(
                f"Docker Compose v2 ('docker compose') is required{hint}. On Debian, install "
                "the docker-compose package from trixie or newer, or Docker's compose plugin."
            )

    def cpus(self) -> int:
        """How many CPUs the Docker daemon can give containers."""
        proc = self.run(
            ["docker", "info", "--format", "{{.NCPU}}"], check=False, quiet=True, timeout=30
        )
        return int(proc.stdout.strip()) if proc.stdout.strip().isdigit() else 0

    def versions(self) -> dict[str, str]:
        server = self.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            check=False,
            quiet=True,
            timeout=30,
        ).stdout.strip()
        compose = self.run(
            ["docker", "compose", "version", "--short"], check=False, quiet=True, timeout=30
        ).stdout.strip()
        return {"docker_version": server, "compose_version": compose}

    # --- images ---------------------------------------------------------------------------
    def build(
        self, compose_files: Sequence[ComposeFiles], *, generators: Sequence[str] = LOADGEN_SERVICES
    ) -> None:
        """Build every image the given files (each may come with overrides) need, plus the
        load generators named (compose/loadgen.yml's services: the bench's tools alone skip the
        story's compiled sender)."""
        for compose_file in compose_files:
            self._build(self.compose(compose_file, "build"))
        self._build(
            [
                "docker",
                "compose",
                *self.env_file_args(),
                "-f",
                LOADGEN_COMPOSE,
                "build",
                *generators,
            ]
        )

    def _build(self, argv: list[str]) -> None:
        proc = self.run(argv, check=False)
        if proc.returncode != 0:
            raise DockerError(f"image build failed: {shown(argv)}\n{tail(proc, lines=25)}")

    def env_file_args(self) -> list[str]:
        """compose/loadgen.yml lives below the root, so point it at the root's .env by hand."""
        return ["--env-file", ".env"] if (self.root / ".env").exists() else []

    def image_ids(self, names: Sequence[str]) -> dict[str, str | None]:
        """Each image's id (None: not built)."""
        ids: dict[str, str | None] = {}
        for name in names:
            proc = self.run(
                ["docker", "image", "inspect", "--format", "{{.Id}}", name], check=False, quiet=True
            )
            ids[name] = proc.stdout.strip() if proc.returncode == 0 else None
        return ids

    # --- scenario lifecycle ---------------------------------------------------------------
    def services(self, compose_file: ComposeFiles) -> list[str]:
        proc = self.run(self.compose(compose_file, "config", "--services"), quiet=True, timeout=60)
        return proc.stdout.split()

    def project(self, compose_file: ComposeFiles) -> str:
        """The Compose project name, as the file declares it (`docker compose config`'s
        `name`): never assumed from the file's stem, which the demos' names are not."""
        key = (compose_file,) if isinstance(compose_file, str) else tuple(compose_file)
        if key not in self._projects:
            proc = self.run(self.compose(key, "config", "--format", "json"), quiet=True, timeout=60)
            self._projects[key] = json.loads(proc.stdout)["name"]
        return self._projects[key]

    def network(self, compose_file: ComposeFiles) -> str:
        """The project's default network, where the load generator joins the scenario.

        Also asked for when writing down a failed scenario's commands, where Compose may be
        what failed: then the file's own `name:` line, else Compose's default (its folder)."""
        try:
            return f"{self.project(compose_file)}_default"
        except DockerError:
            first = Path(compose_file if isinstance(compose_file, str) else compose_file[0])
            declared = declared_name(self.root / first)
            return f"{declared or (self.root / first).resolve().parent.name.lower()}_default"

    def published_ports(
        self, compose_file: ComposeFiles, services: Sequence[str] = ()
    ) -> list[int]:
        proc = self.run(self.compose(compose_file, "config", "--format", "json"), quiet=True)
        ports = []
        for name, svc in json.loads(proc.stdout).get("services", {}).items():
            if services and name not in services:
                continue
            ports += [int(p["published"]) for p in svc.get("ports", []) if p.get("published")]
        return ports

    def check_ports_free(self, compose_file: ComposeFiles, services: Sequence[str] = ()) -> None:
        for port in self.published_ports(compose_file, services):
            with socket.socket() as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    raise DockerError(
                        f"port {port} on 127.0.0.1 is already in use, and {compose_file} "
                        f"publishes it. Stop whatever holds it (docker ps; ss -ltnp "
                        f"'sport = :{port}') and try again."
                    ) from None

    def up(
        self,
        compose_file: ComposeFiles,
        services: Sequence[str] = (),
        *,
        wait_timeout: int = WAIT_TIMEOUT_S,
    ) -> None:
        argv = self.compose(
            compose_file, "up", "-d", "--wait", "--wait-timeout", str(wait_timeout), *services
        )
        deadline = time.monotonic() + wait_timeout
        proc = self.run(argv, check=False, timeout=wait_timeout + 60)
        problem = tail(proc, lines=8) if proc.returncode != 0 else None
        # Compose can return from --wait while a health check has not passed yet (seen once
        # in a run of the integration tests: a scenario that never answers let through), so
        # look for ourselves.
        while problem is None and (waiting := self.not_healthy(compose_file, services)):
            if time.monotonic() > deadline:
                problem = "still not healthy: " + ", ".join(waiting)
            else:
                time.sleep(0.5)
        if problem is not None:
            logs = self.logs(compose_file)
            raise DockerError(
                f"{compose_file} did not become healthy within {wait_timeout} s\n"
                f"{problem}\n--- last log lines ---\n{logs}"
            )

    def not_healthy(self, compose_file: ComposeFiles, services: Sequence[str] = ()) -> list[str]:
        """The containers whose health check has not passed ("service: starting"); one
        without a health check counts as healthy once it runs, as for `up --wait`."""
        proc = self.run(
            self.compose(compose_file, "ps", "--format", "json", *services),
            check=False,
            quiet=True,
            timeout=60,
        )
        found: list[str] = []
        for line in proc.stdout.splitlines():
            try:
                rows = json.loads(line)
            except ValueError:
                continue
            for row in rows if isinstance(rows, list) else [rows]:
                health = row.get("Health") or "healthy"
                if health != "healthy":
                    found.append(f"{row.get('Service')}: {health}")
        return found

    def pin(self, compose_file: ComposeFiles, app_services: Sequence[str]) -> None:
        """Move the scenario's containers onto their cores (--pin-cpus); no-op when free."""
        if self.pinning is None:
            return
        for cid, service in self.service_containers(compose_file):
            cpus = self.pinning.app_cpus if service in app_services else self.pinning.rest_cpus
            self.run(["docker", "update", "--cpuset-cpus", cpus, cid], timeout=60)

    def service_containers(self, compose_file: ComposeFiles) -> list[tuple[str, str]]:
        """(container id, service) of every container the file has up."""
        proc = self.run(
            self.compose(compose_file, "ps", "--format", "{{.ID}} {{.Service}}"),
            check=False,
            quiet=True,
            timeout=60,
        )
        pairs = (line.split(None, 1) for line in proc.stdout.splitlines())
        return [(pair[0], pair[1]) for pair in pairs if len(pair) == 2]

    def logs(self, compose_file: ComposeFiles, *, lines: int = 15) -> str:
        proc = self.run(
            self.compose(compose_file, "logs", "--no-color", "--tail", str(lines)),
            check=False,
            quiet=True,
            timeout=60,
        )
        return (proc.stdout + proc.stderr).strip()

    def down(self, compose_file: ComposeFiles) -> None:
        """Remove everything the file brought up, whatever state it is in, and check.

        Load-generator containers are not Compose's: any still attached to the network would
        keep `down` from removing it, so they go first. If something is still there afterwards
        (a `compose up` killed half-way may have had a container created just after `down`
        looked), `down` runs again, a bounded number of times.
        """
        with deferred_signals():
            try:
                project = self.project(compose_file)
            except DockerError:
                # Compose cannot read the file, so nothing of it can be running under a name
                # we could know: one `down` for whatever it can still find.
                self.run(
                    self.compose(
                        compose_file, "down", "--volumes", "--remove-orphans", "--timeout", "10"
                    ),
                    check=False,
                    timeout=180,
                    shielded=True,
                )
                return
            for attempt in range(3):
                self.remove_strays(network=f"{project}_default")
                self.run(
                    self.compose(
                        compose_file, "down", "--volumes", "--remove-orphans", "--timeout", "10"
                    ),
                    check=False,
                    timeout=180,
                    quiet=attempt > 0,
                    shielded=True,
                )
                if not any(self.leftovers(project).values()):
                    return
                time.sleep(1)

    def remove_strays(self, *, network: str) -> None:
        """Remove load-generator containers still attached to a scenario's network."""
        for image in (LOADGEN_IMAGE, OPENLOOP_IMAGE):
            proc = self.run(
                [
                    "docker",
                    "ps",
                    "--all",
                    "--filter",
                    f"network={network}",
                    "--filter",
                    f"ancestor={image}",
                    "--quiet",
                ],
                check=False,
                quiet=True,
                timeout=60,
            )
            for cid in proc.stdout.split():
                self.remove(cid)

    def leftovers(self, project: str) -> dict[str, list[str]]:
        """Containers, networks and volumes of a Compose project that still exist."""
        label = f"label=com.docker.compose.project={project}"
        found = {}
        for kind, cmd in (
            ("containers", ("ps", "--all")),
            ("networks", ("network", "ls")),
            ("volumes", ("volume", "ls")),
        ):
            proc = self.run(
                ["docker", *cmd, "--filter", label, "--quiet"], check=False, quiet=True, timeout=60
            )
            found[kind] = proc.stdout.split()
        return found

    def stop_service(self, compose_file: ComposeFiles, service: str) -> None:
        self.run(self.compose(compose_file, "stop", service), timeout=120)

    def start_service(self, compose_file: ComposeFiles, service: str) -> None:
        self.run(self.compose(compose_file, "start", service), timeout=120)

    def container_id(self, compose_file: ComposeFiles, service: str) -> str | None:
        proc = self.run(
            self.compose(compose_file, "ps", "--quiet", service), check=False, quiet=True
        )
        return proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else None

    def ip_address(self, container: str, *, network: str) -> str | None:
        proc = self.run(
            [
                "docker",
                "inspect",
                "--format",
                f'{{{{(index .NetworkSettings.Networks "{network}").IPAddress}}}}',
                container,
            ],
            check=False,
            quiet=True,
        )
        return proc.stdout.strip() or None

    def main_pid(self, container: str) -> int | None:
        proc = self.run(
            ["docker", "inspect", "--format", "{{.State.Pid}}", container], check=False, quiet=True
        )
        pid = proc.stdout.strip()
        return int(pid) if pid.isdigit() and pid != "0" else None

    def restart_count(self, container: str) -> int:
        """How often Docker restarted the container (0 if it is gone): from `state`."""
        state = self.state(container)
        return state.restarts if state else 0

    def state(self, container: str) -> ContainerState | None:
        """`docker inspect`'s State of a container and its RestartCount (None if it is gone)."""
        proc = self.run(
            ["docker", "inspect", "--format", "{{json .State}}\t{{.RestartCount}}", container],
            check=False,
            quiet=True,
            timeout=60,
        )
        if proc.returncode != 0 or "\t" not in proc.stdout:
            return None
        state, restarts = proc.stdout.strip().rsplit("\t", 1)
        return ContainerState.of(json.loads(state), restarts=int(restarts or 0))

    def processes(self, container: str) -> list[tuple[int, int, str]]:
        """(pid, parent pid, command line) of every process in a container, host pids."""
        proc = self.run(
            ["docker", "top", container, "-eo", "pid,ppid,args"],
            check=False,
            quiet=True,
            timeout=60,
        )
        rows = []
        for line in proc.stdout.splitlines()[1:]:
            parts = line.split(None, 2)
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                rows.append((int(parts[0]), int(parts[1]), parts[2] if len(parts) > 2 else ""))
        return rows

    # --- the load generator container ------------------------------------------------------
    def loadgen_argv(
        self,
        *,
        network: str,
        tool_argv: Sequence[str],
        name: str | None = None,
        out_dir: Path | None = None,
        detach: bool = False,
        cpu_shares: int | None = None,
        image: str = LOADGEN_IMAGE,
    ) -> list[str]:
        """`docker run` for the load generator on a scenario's network: the one builder of that
        command line. `out_dir` is mounted at /out (written as this user); `cpu_shares` lets
        the generator go first when the cores are contended (the story's open loop)."""
        argv = ["docker", "run"]
        argv += ["--detach"] if detach else ["--rm"]
        if name:
            # Docker's names take [a-zA-Z0-9][a-zA-Z0-9_.-]: a remedy's `+` becomes `.`.
            argv += ["--name", re.sub(r"[^a-zA-Z0-9_.-]", ".", name)]
        argv += ["--network", network]
        if cpu_shares is not None:
            argv += ["--cpu-shares", str(cpu_shares)]
        if self.pinning is not None:
            argv += ["--cpuset-cpus", self.pinning.rest_cpus]
        if out_dir is not None:
            argv += ["--user", f"{os.getuid()}:{os.getgid()}", "--volume", f"{out_dir}:/out"]
        return [*argv, image, *tool_argv]

    def fetch(self, *, network: str, url: str, timeout_s: float = 30) -> tuple[int, str]:
        """GET a URL from inside the scenario's network: (status, body)."""
        argv = self.loadgen_argv(
            network=network,
            tool_argv=[
                "curl",
                "--silent",
                "--show-error",
                "--max-time",
                f"{timeout_s:g}",
                # curl expands the \n itself: the status goes on a line of its own after the body.
                "--write-out",
                "\\n%{http_code}",
                url,
            ],
        )
        proc = self.run(argv, check=False, timeout=timeout_s + 30)
        if proc.returncode != 0:
            return 0, last_line(proc)
        body, _, status = proc.stdout.rpartition("\n")
        return int(status or 0), body

    def wait_container(self, name: str, *, timeout: float) -> int:
        proc = self.run(["docker", "wait", name], quiet=True, timeout=timeout)
        return int(proc.stdout.strip() or 1)

    def container_logs(self, name: str) -> tuple[str, str]:
        proc = self.run(["docker", "logs", name], check=False, quiet=True)
        return proc.stdout, proc.stderr

    # --- containers the playground starts beside a service it does not own ----------------
    def network_exists(self, name: str) -> bool:
        proc = self.run(["docker", "network", "inspect", name], check=False, quiet=True)
        return proc.returncode == 0

    def labelled(self, label: str) -> list[tuple[str, str]]:
        """(id, the label's value) of every container, running or not, with the label."""
        fmt = f'{{{{.ID}}}} {{{{.Label "{label}"}}}}'
        argv = ["docker", "ps", "--all", "--filter", f"label={label}", "--format", fmt]
        proc = self.run(argv, check=False, quiet=True, timeout=60)
        pairs = (line.split(None, 1) for line in proc.stdout.splitlines())
        return [(p[0], p[1] if len(p) > 1 else "") for p in pairs if p]

    def remove(self, name: str) -> None:
        self.run(
            ["docker", "rm", "--force", name], check=False, quiet=True, timeout=60, shielded=True
        )


@contextmanager
def scenario_up(
    docker: Docker,
    compose_file: ComposeFiles,
    *,
    failed: Callable[[str], None],
    warn: Callable[[str], None] = lambda text: None,
    services: Sequence[str] = (),
    app_services: Sequence[str] = (),
    wait_timeout_s: int = WAIT_TIMEOUT_S,
) -> Iterator[bool]:
    """Bring a scenario up (healthy, and pinned with --pin-cpus), yield, bring it down.

    Every kind of run works inside this block, and it ends the same way for all: the scenario
    comes down on every exit path (a port already taken leaves nothing to bring down), and a
    DockerError, in the bring-up or in the work, goes no further: ``warn`` gets its whole text
    (with the last log lines) and ``failed`` its first line, which the run records as the
    error of what it did not finish. It yields whether the scenario came up; the work runs
    only then: ``with scenario_up(...) as up: if up: ...``.
    """
    yielded = False
    try:
        docker.check_ports_free(compose_file, services)
        try:
            docker.up(compose_file, services, wait_timeout=wait_timeout_s)
            docker.pin(compose_file, app_services)
            yielded = True
            yield True
        finally:
            docker.down(compose_file)
    except DockerError as exc:
        warn(str(exc))
        failed(str(exc).splitlines()[0])
        if not yielded:
            yield False


def declared_name(path: Path) -> str | None:
    """A compose file's top-level `name:`, read from its text (None if it has none)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(r"^name:\s*[\"']?([a-z0-9][a-z0-9_-]*)", text, re.MULTILINE)
    return match.group(1) if match else None


def tail(proc: subprocess.CompletedProcess[str], *, lines: int = 10) -> str:
    text = (proc.stderr or "") + (proc.stdout or "")
    return "\n".join(text.strip().splitlines()[-lines:])


def last_line(proc: subprocess.CompletedProcess[str]) -> str:
    out = tail(proc, lines=1)
    return out.strip()


def _which(cmd: str) -> bool:
    from shutil import which

    return which(cmd) is not None

"""A Docker whose bring-up steps are recorded instead of run: what `compose.scenario_up` and the
story's bring-up take, for the tests of both."""

from __future__ import annotations

from playground.core.compose import Docker, DockerError


class Steps(Docker):
    """The steps scenario_up takes, recorded (and each wait timeout asked for); ``fail`` names
    the one that raises, as Docker does, with its last log lines."""

    def __init__(self, root, *, fail: str | None = None) -> None:
        super().__init__(root=root, env={"PATH": str(root)})
        self.fail, self.steps, self.waits = fail, [], []

    def _step(self, name: str) -> None:
        self.steps.append(name)
        if name == self.fail:
            raise DockerError(f"{name} failed\n--- last log lines ---\nsomething")

    def check_ports_free(self, compose_file, services=()) -> None:
        self._step("ports")

    def up(self, compose_file, services=(), *, wait_timeout=0) -> None:
        self.waits.append(wait_timeout)
        self._step("up")

    def pin(self, compose_file, app_services) -> None:
        self._step("pin")

    def down(self, compose_file) -> None:
        self._step("down")

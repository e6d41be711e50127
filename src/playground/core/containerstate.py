"""What `docker inspect` says of a container's state, as the runner reads it, and how long a
bring-up may wait for it to be healthy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: How long a bring-up may take to be healthy, s (`--wait-timeout`'s default).
WAIT_TIMEOUT_S = 120


@dataclass(frozen=True)
class ContainerState:
    """What `docker inspect` says of a container's state: the fields the runner reads."""

    pid: int  # the main process, on the host (0 once it has stopped)
    status: str | None
    started_at: str | None
    oom_killed: bool
    restarts: int

    @classmethod
    def of(cls, state: dict[str, Any], *, restarts: int) -> ContainerState:
        """From `{{json .State}}` and `{{.RestartCount}}`."""
        return cls(
            pid=int(state.get("Pid") or 0),
            status=state.get("Status"),
            started_at=state.get("StartedAt"),
            oom_killed=bool(state.get("OOMKilled")),
            restarts=restarts,
        )

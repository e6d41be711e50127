"""The cross-check without oha's image (built on demand, so not with --no-build): nothing is
brought up, and each pair says why instead of "oha printed no JSON report"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playground.core.scenarios import resolve_story
from playground.incident.storyresults import StoryRun
from playground.story.crosscheck import OHA_IMAGE
from playground.story.crosscheckrun import run_crosscheck
from playground.story.run import RunInProgress


class NoOha:
    """A Docker in which oha's image was never built; anything else it is asked is a failure."""

    def image_ids(self, names: Sequence[str]) -> dict[str, str | None]:
        return {name: None if name == OHA_IMAGE else "sha256:x" for name in names}

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"nothing is brought up without oha's image: docker.{name}")


class Store:
    def __init__(self) -> None:
        self.saved = 0

    def save_run(self, run: StoryRun) -> None:
        self.saved += 1


def test_without_ohas_image_nothing_is_brought_up_and_each_pair_says_why() -> None:
    warned: list[str] = []
    store = Store()
    story = RunInProgress(
        run=StoryRun(),
        store=store,  # type: ignore[arg-type]
        docker=NoOha(),  # type: ignore[arg-type]
        info=lambda message: None,
        warn=warned.append,
    )
    run_crosscheck(story, resolve_story(["uwsgi-threads", "uwsgi-gevent"]), delay=2.0, duration=30)
    checks = story.run.crosschecks
    assert {c.target for c in checks} == {"story-uwsgi-threads", "story-uwsgi-gevent"}
    assert len(checks) == 2 * len({c.rate for c in checks}) and len(checks) >= 4
    assert all(c.error and "not built" in c.error and c.oha is None for c in checks)
    assert len(warned) == 1 and "compose/oha.yml" in warned[0]
    assert store.saved == 1

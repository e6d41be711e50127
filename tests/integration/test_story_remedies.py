"""What else saves a thread pool, for real: Gunicorn's gthread through a harsher incident as it
is, with a bounded queue and with an outbound timeout (about two and a half minutes).

Not in the story's lane (tests/lanes.py): how a 2-worker gthread pool shares its
connections between its workers moves with the machine's load (docs/story.md: one worker
full, the other far from it), and with it whether the pool as it is collapses. Measured: with
the other lane's fuzz beside it, the pool as it is served 99.7% of the visits during the
incident and recovered as soon as the bounded queue did; alone, 67% and not within the run.
So these run one at a time, last.
"""

from __future__ import annotations

import pytest

from playground.storymodel import StoryTarget
from tests.integration.storyruns import story_run

pytestmark = pytest.mark.integration

# Gunicorn's gthread at half the story's scale (2 x 32 threads for 30 visits/s, the story's
# ratio) through a harsher, shorter incident (0.7 s -> 3 s for 12 s: 21 answers/s against 30
# arrivals), as it is and with two remedies layered on, the same arrivals (same seed).
REMEDIES = [
    "--rate",
    "30",
    "--threads",
    "32",
    "--incident-delay",
    "3",
    "--before",
    "5",
    "--incident",
    "12",
    "--after",
    "15",
    "--quiet",
    "--no-build",
]


@pytest.fixture(scope="module")
def remedies(tmp_path_factory) -> dict[str, StoryTarget]:
    run = story_run(
        tmp_path_factory.mktemp("remedies"),
        "gunicorn-threads",
        "gunicorn-threads+gunicorn-bounded-queue",
        "gunicorn-threads+timeout-1.5",
        *REMEDIES,
    )
    return {t.name.removeprefix("story-gunicorn-threads"): t for t in run.targets}


def test_a_bounded_queue_keeps_serving_and_recovers_before_the_pool_as_it_is(remedies):
    """worker_connections = threads: no worker queues connections its threads cannot take, so
    the pool serves (nearly) every visit, a user past it gets a 502 well before giving up (about
    2 s measured: not milliseconds), and the pool is itself again sooner than without it."""
    base, bounded = remedies[""].summary, remedies["+gunicorn-bounded-queue"].summary
    assert base.timeouts > 0, base
    assert bounded.visits_served_during >= 0.9 > base.visits_served_during, (base, bounded)
    if bounded.errors:
        assert bounded.error_latency_p50_s < 3.0, bounded
    assert bounded.recovery_s is not None and bounded.recovery_s <= 10, bounded
    assert base.recovery_s is None or base.recovery_s > bounded.recovery_s, (base, bounded)


def test_an_outbound_timeout_answers_well_before_the_users_give_up(remedies):
    """UPSTREAM_TIMEOUT 1.5 s: the errors users see are the app's 504s at about 1.5 s (with
    some queueing), well before their 4 s of patience."""
    timeout = remedies["+timeout-1.5"].summary
    assert timeout.outcomes.get("http 504", 0) > 0, timeout.outcomes
    assert 1.4 <= timeout.error_latency_p50_s < 3.0, timeout

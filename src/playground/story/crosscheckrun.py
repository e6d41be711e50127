"""The cross-check's measurement (`playground story --crosscheck`): the generator and oha at
the same rates on one bring-up; what it compares and shows is :mod:`.crosscheck`'s."""

from __future__ import annotations

from collections.abc import Sequence

from playground.core.compose import DockerError, shown
from playground.core.target import Target
from playground.core.tools.oha import oha_command, oha_report
from playground.core.tools.output import LoadOutputError
from playground.incident.storyresults import CrossCheck
from playground.story.crosscheck import (
    OHA_IMAGE,
    differences,
    oha_figures,
    openloop_args,
    openloop_figures,
    rates,
)
from playground.story.run import (
    RunInProgress,
    as_run,
    bound,
    brought_up,
    generator,
    read_output,
    settle,
)
from playground.story.serverside import ServerAddresses


def _one(
    story: RunInProgress,
    target: Target,
    servers: ServerAddresses,
    *,
    rate: float,
    delay: float,
    duration: float,
) -> CrossCheck:
    """The generator, then oha, on the target already up; the servers drain before each."""
    settings, name = story.run.story, target.name.removeprefix("story-")
    out = f"crosscheck-{name}-{rate:g}.json"
    ours_argv = generator(
        story,
        target,
        openloop_args(
            settings, target, rate=rate, delay=delay, duration=duration, out=f"/out/{out}"
        ),
        name=f"{target.name}-crosscheck",
    )
    oha_argv = generator(
        story,
        target,
        oha_command(
            url=target.url(delay=delay),
            rate=rate,
            duration_s=duration,
            timeout_s=settings.timeout,
            # Never a cap: every request of the longest wait in flight at once, and then some.
            connections=max(100, int(2 * rate * settings.timeout)),
        ),
        name=f"{target.name}-oha",
        image=OHA_IMAGE,
    )
    settle(servers, limit=30)
    proc = story.docker.run(ours_argv, check=False, timeout=bound(settings, duration))
    output = read_output(story.raw_dir / out, target.name, proc)
    settle(servers, limit=30)
    proc = story.docker.run(oha_argv, check=False, timeout=bound(settings, duration))
    (story.raw_dir / f"oha-{name}-{rate:g}.json").write_text(proc.stdout)
    try:
        theirs = oha_figures(oha_report(proc.stdout), duration_s=duration)
    except LoadOutputError as exc:
        raise DockerError(f"{target.name} at {rate:g}/s: {exc} (exit {proc.returncode})") from None
    ours = openloop_figures(output, duration_s=duration)
    return CrossCheck(
        target=target.name,
        rate=rate,
        openloop=ours,
        oha=theirs,
        differences=differences(ours, theirs),
        commands=[shown(ours_argv), shown(oha_argv)],
    )


def run_crosscheck(
    story: RunInProgress, targets: Sequence[Target], *, delay: float, duration: float
) -> None:
    """Each target on one bring-up: at each rate the generator, then oha; results.json after
    every pair."""
    settings = story.run.story
    offered = rates(pool=settings.workers * settings.threads, delay=delay)
    if story.docker.image_ids([OHA_IMAGE])[OHA_IMAGE] is None:
        _not_built(story, targets, offered)
        return
    for base in targets:
        target = as_run(base, settings)
        with brought_up(story, target) as servers:
            for rate in offered:
                story.info(f"{target.name}: {rate:g}/s for {duration:g} s, openloop then oha")
                try:
                    check = _one(story, target, servers, rate=rate, delay=delay, duration=duration)
                except DockerError as exc:
                    story.warn(str(exc))
                    check = CrossCheck(target=target.name, rate=rate, error=str(exc))
                story.run.crosschecks.append(check)
                story.save()


def _not_built(story: RunInProgress, targets: Sequence[Target], offered: list[float]) -> None:
    """Without oha's image (built on demand, so not with --no-build) nothing is brought up:
    each pair says why, once for the run."""
    why = (
        f"oha's image {OHA_IMAGE} is not built: run without --no-build, or build it once "
        "with `docker compose -f compose/oha.yml build`"
    )
    story.warn(f"cross-check: {why}")
    for base in targets:
        name = as_run(base, story.run.story).name
        story.run.crosschecks += [CrossCheck(target=name, rate=r, error=why) for r in offered]
    story.save()

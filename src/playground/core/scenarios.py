"""The registry: every measurable target of the playground, as frozen data.

A *target* is one URL of one compose file loaded at one default load. Two targets can share a
compose file (the dev server's two services, the bonus app's two modules): the runner brings
the file up once and measures both. The published figures are the 2020 tutorial's
(`SCENARIOS.md`), shown beside ours in every report.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from playground.core import contenders, demos, remedies
from playground.core.errors import UsageError
from playground.core.target import Target

UPSTREAM_BODY = "slow api response"
BONUS_BODY_PREFIX = "Hi there! slow api response\npostgres NOW() = "


def _t(
    *,
    name: str,
    title: str,
    compose_file: str,
    service: str,
    port: int,
    host_port: int | None,
    n: int,
    c: int,
    rps: float | None,
    time_s: float | None,
    **kw: Any,
) -> Target:
    """A scenario in the registry's shorthand: its default load as ``n`` and ``c``, the
    tutorial's published figures as ``rps`` and ``time_s`` (None: it published none)."""
    return Target(
        name=name,
        title=title,
        compose_file=compose_file,
        service=service,
        port=port,
        host_port=host_port,
        requests=n,
        concurrency=c,
        tutorial_rps=rps,
        tutorial_time_s=time_s,
        **kw,
    )


SCENARIOS: tuple[Target, ...] = (
    _t(
        name="devserver",
        title="Flask dev server, no threads",
        compose_file="sync-devserver.yml",
        service="flask_app",
        port=3000,
        host_port=3000,
        n=10,
        c=5,
        rps=0.99,
        time_s=10.139,
        server="Flask dev server",
        model="single",
        per_worker=1,
    ),
    _t(
        name="devserver-threads",
        title="Flask dev server, a thread per request",
        compose_file="sync-devserver.yml",
        service="flask_app_threaded",
        port=3001,
        host_port=3001,
        n=2000,
        c=200,
        rps=124.69,
        time_s=16.040,
        server="Flask dev server",
        model="threads",
    ),
    _t(
        name="gevent-pywsgi",
        title="gevent.pywsgi",
        compose_file="async-gevent-pywsgi.yml",
        service="flask_app",
        port=3000,
        host_port=3000,
        n=2000,
        c=200,
        rps=114.05,
        time_s=17.536,
        server="gevent.pywsgi",
        model="gevent",
    ),
    _t(
        name="gunicorn-threads",
        title="Gunicorn 4 workers x 50 threads",
        compose_file="sync-gunicorn.yml",
        service="flask_app_gunicorn",
        port=3000,
        host_port=3000,
        n=2000,
        c=200,
        rps=148.95,
        time_s=13.427,
        server="Gunicorn",
        model="threads",
        workers=4,
        per_worker=50,
    ),
    _t(
        name="gunicorn-gevent",
        title="Gunicorn gevent worker x1",
        compose_file="async-gevent-gunicorn.yml",
        service="flask_app",
        port=3000,
        host_port=3000,
        n=2000,
        c=200,
        rps=112.11,
        time_s=17.839,
        server="Gunicorn",
        model="gevent",
        workers=1,
        per_worker=1000,
        scale_shape=(2, 9000),
    ),
    _t(
        name="uwsgi-threads",
        title="uWSGI 4 workers x 50 threads",
        compose_file="sync-uwsgi.yml",
        service="flask_app_uwsgi",
        port=3000,
        host_port=3000,
        n=2000,
        c=200,
        rps=157.67,
        time_s=12.685,
        server="uWSGI",
        model="threads",
        workers=4,
        per_worker=50,
    ),
    _t(
        name="uwsgi-gevent",
        title="uWSGI gevent 2 workers x 2000",
        compose_file="async-gevent-uwsgi.yml",
        service="flask_app",
        port=3000,
        host_port=3000,
        n=2000,
        c=200,
        rps=151.93,
        time_s=13.164,
        server="uWSGI",
        model="gevent",
        workers=2,
        per_worker=2000,
        scale_shape=(2, 6000),
    ),
    _t(
        name="nginx-gunicorn",
        title="nginx -> Gunicorn gevent x1 (HTTP)",
        compose_file="nginx-gunicorn.yml",
        service="ingress",
        port=8080,
        host_port=8080,
        n=2000,
        c=200,
        rps=None,
        time_s=None,
        sampled=("flask_app",),
        server="Gunicorn",
        model="gevent",
        workers=1,
        per_worker=1000,
        proxy="nginx",
        scale_shape=(2, 9000),
    ),
    _t(
        name="nginx-uwsgi",
        title="nginx -> uWSGI gevent 1 x 2000 (uwsgi protocol)",
        compose_file="nginx-uwsgi.yml",
        service="ingress",
        port=8080,
        host_port=8080,
        n=2000,
        c=200,
        rps=None,
        time_s=None,
        sampled=("flask_app",),
        server="uWSGI",
        model="gevent",
        workers=1,
        per_worker=2000,
        proxy="nginx",
        scale_shape=(2, 6000),
    ),
    _t(
        name="bonus-psycopg2",
        title="bonus: uWSGI gevent + psycopg2, no psycogreen",
        compose_file="bonus-psycopg2-gevent.yml",
        service="flask_app",
        port=3000,
        host_port=3000,
        n=10,
        c=5,
        rps=1.50,
        time_s=6.670,
        body=BONUS_BODY_PREFIX,
        body_is_prefix=True,
        server="uWSGI",
        model="gevent",
        workers=1,
        per_worker=2000,
        database=True,
    ),
    _t(
        name="bonus-psycogreen",
        title="bonus: uWSGI gevent + psycopg2 + psycogreen",
        compose_file="bonus-psycopg2-gevent.yml",
        service="flask_app_2",
        port=3001,
        host_port=3001,
        n=10,
        c=5,
        rps=3.18,
        time_s=3.148,
        body=BONUS_BODY_PREFIX,
        body_is_prefix=True,
        server="uWSGI",
        model="gevent",
        workers=1,
        per_worker=2000,
        database=True,
    ),
)

# The nine compose files, in the tutorial's order: what `make bench` brings up.
SCENARIO_FILES: tuple[str, ...] = tuple(dict.fromkeys(t.compose_file for t in SCENARIOS))


# The same load straight at the upstream: what the harness itself can reach on this machine.
CALIBRATION = Target(
    name="calibration",
    title="calibration: ab straight at slow_api",
    compose_file="async-gevent-pywsgi.yml",
    service="slow_api",
    port=4000,
    host_port=None,
    requests=2000,
    concurrency=200,
    services=("slow_api",),
    body=UPSTREAM_BODY,
    kind="calibration",
)

# The gevent scenarios with gevent's c-ares resolver instead of its default thread pool: the
# ~10 OS threads that appear under load are that pool running blocking getaddrinfo() calls
# for `slow_api`; with GEVENT_RESOLVER=ares the look-ups happen in the event loop instead.
ARES_OVERRIDE = "compose/ares.yml"
ARES_VARIANTS: tuple[Target, ...] = tuple(
    replace(
        t,
        name=f"{t.name}-ares",
        title=f"{t.title}, c-ares resolver",
        overrides=(ARES_OVERRIDE,),
        tutorial_rps=None,
        tutorial_time_s=None,
        kind="variant",
    )
    for t in SCENARIOS
    if t.name in ("gevent-pywsgi", "gunicorn-gevent", "uwsgi-gevent")
)

# The war story's targets (`playground story`, docs/story.md): nginx in front of the app, as
# in the incident, scaled down to 2 cores: 2 processes with a fixed pool of 64 threads each, or
# 1000 greenlets each. The runner sets the numbers through the files' STORY_* variables; the
# target's name is its compose project's (`name:` in the file).
STORY_KIND = "story"


def _story(mode: str, title: str, *, server: str, model: str, per_worker: int | None) -> Target:
    return Target(
        name=f"story-{mode}",
        title=title,
        compose_file=f"story/{mode}.yml",
        service="ingress",
        port=8080,
        host_port=8080,
        requests=2000,
        concurrency=200,
        delay=0.7,
        sampled=("flask_app",),
        kind=STORY_KIND,
        server=server,
        model=model,
        workers=2,
        per_worker=per_worker,
        proxy="nginx",
    )


STORY_TARGETS: tuple[Target, ...] = (
    _story(
        "uwsgi-threads",
        "nginx -> uWSGI 2 x 64 threads",
        server="uWSGI",
        model="threads",
        per_worker=64,
    ),
    _story(
        "uwsgi-gevent",
        "nginx -> uWSGI gevent 2 x 1000",
        server="uWSGI",
        model="gevent",
        per_worker=1000,
    ),
    _story(
        "gunicorn-threads",
        "nginx -> Gunicorn gthread 2 x 64 threads",
        server="Gunicorn",
        model="threads",
        per_worker=64,
    ),
    _story(
        "gunicorn-gevent",
        "nginx -> Gunicorn gevent 2 x 1000",
        server="Gunicorn",
        model="gevent",
        per_worker=1000,
    ),
)

# The 2026 contenders that can stand behind the story's nginx, at the story's scale: 2
# processes, and where a target has a pool, 64 threads each (`playground story --contenders`).
# Gunicorn's gthread is story-gunicorn-threads itself.
STORY_CONTENDERS: tuple[Target, ...] = (
    _story(
        "granian",
        "nginx -> Granian WSGI 2 x 64 blocking threads",
        server="Granian",
        model="threads",
        per_worker=64,
    ),
    _story(
        "granian-backpressure",
        "nginx -> Granian WSGI 2 x 64, backpressure 64",
        server="Granian",
        model="threads",
        per_worker=64,
    ),
    _story(
        "uvicorn-a2wsgi",
        "nginx -> Uvicorn + a2wsgi 2 x 64 threads",
        server="Uvicorn",
        model="threads",
        per_worker=64,
    ),
    _story(
        "flask-async-views",
        "nginx -> Flask async views on gthread 2 x 64",
        server="Gunicorn",
        model="threads",
        per_worker=64,
    ),
    _story(
        "quart-hypercorn",
        "nginx -> Quart on Hypercorn, 2 workers (asyncio)",
        server="Hypercorn",
        model="asyncio",
        per_worker=None,
    ),
    _story(
        "nogil-gthread",
        "nginx -> free-threaded CPython 3.13, gthread 2 x 64",
        server="Gunicorn",
        model="threads",
        per_worker=64,
    ),
)


#: Where the registry's targets come from, in the order `playground list` shows them: the
#: tutorial's scenarios, the harness ceiling, the c-ares variants, the war story's targets and
#: contenders, the 2026 contenders, the companion demos (their default and published loads),
#: and the remedies layered on the story's targets. This is the only place the registry is
#: filled: importing any of these modules adds nothing to it.
SOURCES: tuple[tuple[Target, ...], ...] = (
    SCENARIOS,
    (CALIBRATION,),
    ARES_VARIANTS,
    STORY_TARGETS,
    STORY_CONTENDERS,
    contenders.CONTENDERS,
    demos.DEMOS,
    demos.PUBLISHED,
    remedies.variants(STORY_TARGETS),
)


def registry_of(*sources: tuple[Target, ...]) -> dict[str, Target]:
    """The registry's table, by name, of every target of the sources; a name is never reused."""
    registry: dict[str, Target] = {}
    for target in (target for source in sources for target in source):
        if registry.get(target.name, target) is not target:
            raise ValueError(f"a target named {target.name!r} is registered already")
        registry[target.name] = target
    return registry


REGISTRY: dict[str, Target] = registry_of(*SOURCES)


class UnknownTargetError(UsageError):
    """A name the registry does not know (or not of the kind asked for)."""


def resolve(*, names: list[str]) -> list[Target]:
    """Targets by name, in the order given; an unknown name is a clear error."""
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        known = ", ".join(REGISTRY)
        raise UnknownTargetError(
            f"unknown scenario {', '.join(map(repr, unknown))}; known: {known}"
        )
    return [REGISTRY[n] for n in names]


def story_targets() -> list[Target]:
    """The story's own targets, in order (the remedies add variants of them: remedies.py)."""
    return list(STORY_TARGETS)


def _story_target(name: str) -> Target:
    """A story target by name, `story-` optional (`uwsgi-threads` is `story-uwsgi-threads`)."""
    known = {t.name: t for t in REGISTRY.values() if t.kind == STORY_KIND}
    target = known.get(name) or known.get(f"story-{name}")
    if target is None:
        raise UnknownTargetError(
            f"unknown story target {name!r}; story targets: "
            + ", ".join(t.name.removeprefix("story-") for t in story_targets())
            + " (and TARGET+REMEDY, see `playground story --help`)"
        )
    return target


def resolve_story(names: list[str]) -> list[Target]:
    """Story targets by name, `story-` optional, remedies included (`uwsgi-threads+timeout-3`);
    all of the story's own for no names. An unknown target or remedy, or a remedy that does not
    fit its target, is refused with the reason (or the names it could have been)."""
    out: list[Target] = []
    for name in names:
        base, plus, remedy_name = name.partition("+")
        if not plus:
            out.append(_story_target(name))
            continue
        target = _story_target(base)
        remedy = remedies.BY_NAME.get(remedy_name)
        if remedy is None:
            raise UnknownTargetError(
                f"unknown remedy {remedy_name!r}; remedies: {', '.join(remedies.BY_NAME)}"
            )
        if (why := remedy.fits(target)) is not None:
            raise UsageError(f"{name}: {why}")
        out.append(_variant_of(target, remedy))
    return out or story_targets()


def remedies_table(bases: list[Target]) -> list[Target]:
    """The remedies table's rows for each thread-pool target: the pool as it is, gevent on the
    same server, then every remedy that fits it."""
    rows: list[Target] = []
    for base in bases:
        if base.model != remedies.THREADS:
            raise UsageError(
                f"--remedies compares remedies for a thread pool; {base.name} runs gevent"
            )
        twin = next(
            t for t in STORY_TARGETS if t.server == base.server and t.model != remedies.THREADS
        )
        fitting = (r for r in remedies.REMEDIES if r.fits(base) is None)
        rows += [base, twin, *(_variant_of(base, r) for r in fitting)]
    return list(dict.fromkeys(rows))


def _variant_of(target: Target, remedy: remedies.Remedy) -> Target:
    return REGISTRY[f"{target.name}+{remedy.name}"]

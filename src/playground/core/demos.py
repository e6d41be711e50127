"""The companion demos (`demos/`): other write-ups' experiments, listed in the registry.

`playground run --demos` (or `make demos`) runs them; `make bench` does not. Each demo is a
`Target` with kind "demo", so it is listed, run and reported like a scenario; `published` holds
the figure or the claim the write-up published, shown beside ours in the report, which also
says which demos serialise (see `playground.report`).

1. `demos/uwsgi-sleep.yml`: uWSGI `--threads N` vs `--gevent N` with a late or an early
   monkey-patch, on a route that only `time.sleep`s, at N=10 and N=1000 (ab).
2. `demos/gunicorn-workers.yml`: Gunicorn's gevent, eventlet (legacy image) and sync workers,
   with and without `eventlet.monkey_patch()` (ab).
3. `demos/sanic.yml`: `time.sleep` vs `await asyncio.sleep` inside a Sanic handler (ab).
4. `demos/wrk-workers.yml`: the worker-class comparison under wrk, sleeping and not. By
   default a short load (`wrk -t2 -c400 -d10s`, 2 s sleep); `PUBLISHED` holds the published
   one (`wrk -t12 -c400 -d30s`, 10 s sleep), run with `playground run --demos --published`.
"""

from __future__ import annotations

from functools import partial
from typing import TypedDict

from playground.core.target import Target, same_port_target


class Load(TypedDict):
    """A target's default load, as `_demo` (and the contenders' `_contender`) take it."""

    n: int
    c: int
    delay: float


SLEPT = "Hi there! slept 0 s with time.sleep"  # every demo's answer to ?delay=0
SLEPT_ASYNCIO = "Hi there! slept 0 s with asyncio.sleep"

LEGACY = (
    "legacy image: Gunicorn 25.3.0, the last release with the eventlet worker (25.3 marks it "
    "deprecated, 26.0 removed it; eventlet itself is deprecated, maintained for bug fixes "
    "only), with eventlet 0.41.3"
)
# Why the published "sequential without the patch" does not reproduce; the integration test
# checks the mechanism (importing the worker class swaps time.sleep for eventlet's).
SELF_PATCHING = (
    "Gunicorn's eventlet worker calls eventlet.monkey_patch() itself (on import since 24.x, "
    "in init_process in 20.x-23.x), so time.sleep is already eventlet's when the app runs"
)

UWSGI = "demos/uwsgi-sleep.yml"
GUNICORN = "demos/gunicorn-workers.yml"
SANIC = "demos/sanic.yml"
WRK = "demos/wrk-workers.yml"
DEMO_FILES = (UWSGI, GUNICORN, SANIC, WRK)  # what `make demos` runs, `make down` stops


_demo = partial(same_port_target, kind="demo", body=SLEPT)


# --- 1. uWSGI threads vs greenlets, no upstream --------------------------------------------
# Published: N=10, ab -c 10 -n 100: 10.098 s (9.90 rps) with threads, 10.114 s (9.89 rps) with
# gevent, 12 uWSGI threads vs none; N=1000, ab -c 1000 -n 2000: 35.667 s with threads, 5.143 s
# with greenlets. Only times were published at N=1000: the rps is ab's own n / time.
_UWSGI_10: Load = {"n": 100, "c": 10, "delay": 1.0}
_UWSGI_1000: Load = {"n": 2000, "c": 1000, "delay": 1.0}
UWSGI_DEMOS = (
    _demo(
        "uwsgi-threads-10",
        "uWSGI --threads 10, time.sleep(1)",
        UWSGI,
        "threads_10",
        3000,
        **_UWSGI_10,
        tutorial_rps=9.90,
        tutorial_time_s=10.098,
        published="ab -c 10 -n 100: 10.098 s, 9.90 rps; 12 uWSGI threads",
    ),
    _demo(
        "uwsgi-gevent-10",
        "uWSGI --gevent 10 --gevent-monkey-patch, time.sleep(1)",
        UWSGI,
        "gevent_10",
        3001,
        **_UWSGI_10,
        tutorial_rps=9.89,
        tutorial_time_s=10.114,
        published="ab -c 10 -n 100: 10.114 s, 9.89 rps; no extra threads",
    ),
    _demo(
        "uwsgi-gevent-early-10",
        "uWSGI --gevent 10 --gevent-early-monkey-patch, time.sleep(1)",
        UWSGI,
        "gevent_early_10",
        3002,
        **_UWSGI_10,
        published="not published (the published gevent runs used --gevent-monkey-patch)",
    ),
    _demo(
        "uwsgi-threads-1000",
        "uWSGI --threads 1000, time.sleep(1)",
        UWSGI,
        "threads_1000",
        3003,
        **_UWSGI_1000,
        tutorial_rps=round(2000 / 35.667, 2),
        tutorial_time_s=35.667,
        published="ab -c 1000 -n 2000: 35.667 s (rps 56.07 = 2000 / 35.667 s)",
    ),
    _demo(
        "uwsgi-gevent-1000",
        "uWSGI --gevent 1000 --gevent-monkey-patch, time.sleep(1)",
        UWSGI,
        "gevent_1000",
        3004,
        **_UWSGI_1000,
        tutorial_rps=round(2000 / 5.143, 2),
        tutorial_time_s=5.143,
        published="ab -c 1000 -n 2000: 5.143 s (rps 388.88 = 2000 / 5.143 s)",
    ),
    _demo(
        "uwsgi-gevent-early-1000",
        "uWSGI --gevent 1000 --gevent-early-monkey-patch, time.sleep(1)",
        UWSGI,
        "gevent_early_1000",
        3005,
        **_UWSGI_1000,
        published="not published (the published gevent runs used --gevent-monkey-patch)",
    ),
)

# --- 2. Gunicorn worker classes on a time.sleep route ----------------------------------------
# The published runs slept 10 s per request; the shape is the same at 1 s and a run is short.
_SHAPE: Load = {"n": 10, "c": 5, "delay": 1.0}
GUNICORN_DEMOS = (
    _demo(
        "workers-gevent",
        "Gunicorn 27 -k gevent, no code change",
        GUNICORN,
        "gevent",
        3000,
        **_SHAPE,
        published="concurrent, with no code change",
    ),
    _demo(
        "workers-eventlet",
        "Gunicorn 25.3 -k eventlet, no code change (legacy)",
        GUNICORN,
        "eventlet",
        3001,
        **_SHAPE,
        notes=(LEGACY, SELF_PATCHING),
        published="sequential: the app must call eventlet.monkey_patch() first",
    ),
    _demo(
        "workers-eventlet-patched",
        "Gunicorn 25.3 -k eventlet + eventlet.monkey_patch() (legacy)",
        GUNICORN,
        "eventlet_patched",
        3002,
        **_SHAPE,
        notes=(LEGACY,),
        published="concurrent once the app calls eventlet.monkey_patch()",
    ),
    _demo(
        "workers-sync-patched",
        "Gunicorn 25.3 sync worker + eventlet.monkey_patch() (legacy)",
        GUNICORN,
        "sync_patched",
        3003,
        **_SHAPE,
        notes=(LEGACY,),
        published="still sequential: the sync worker takes one request at a time",
    ),
)

# --- 3. The asyncio contrast: Sanic --------------------------------------------------------
SANIC_DEMOS = (
    _demo(
        "sanic-time-sleep",
        "Sanic, time.sleep inside async def",
        SANIC,
        "sanic_blocking",
        3000,
        **_SHAPE,
        published="the whole server waits: sequential",
    ),
    _demo(
        "sanic-asyncio-sleep",
        "Sanic, await asyncio.sleep",
        SANIC,
        "sanic_concurrent",
        3001,
        **_SHAPE,
        body=SLEPT_ASYNCIO,
        published="concurrent",
    ),
)

# --- 4. wrk and the worker classes ---------------------------------------------------------
# Published (wrk -t12 -c400 -d30s), requests in 30 s with a 10 s sleep / with none.
_WRK_SERVERS = (
    # name, title, service, port, body, published with sleep, published without, notes
    ("sync", "Gunicorn 27 sync", "sync", 3000, SLEPT, "3", "13,284", ()),
    (
        "eventlet",
        "Gunicorn 25.3 eventlet + monkey_patch (legacy)",
        "eventlet",
        3001,
        SLEPT,
        "814",
        "35,448",
        (LEGACY,),
    ),
    ("gevent", "Gunicorn 27 gevent", "gevent", 3002, SLEPT, "842", "37,746", ()),
    ("sanic", "Sanic, await asyncio.sleep", "sanic", 3003, SLEPT_ASYNCIO, "817", "126,538", ()),
    (
        "sanic-gunicorn",
        "Sanic under Gunicorn 27 (asgi worker)",
        "sanic-gunicorn",
        3004,
        SLEPT_ASYNCIO,
        None,
        "51,573",
        (),
    ),
)
WRK_CONNECTIONS = 400
SHORT_SLEEP_S = 2.0  # with --duration's default of 10 s: five rounds of sleeps, as 30 s / 10 s


def _wrk_demos(*, published_load: bool) -> tuple[Target, ...]:
    suffix = "-published" if published_load else ""
    sleep = 10.0 if published_load else SHORT_SLEEP_S
    load = (
        dict(tool="wrk-t12", duration_s=30.0) if published_load else dict(tool="wrk")
    )  # duration: the run's --duration (10 s by default)
    targets = []
    for key, title, service, port, body, slept, no_sleep, notes in _WRK_SERVERS:
        # Without sleep first: a sync worker still has the sleeping run's queued requests to
        # work through after wrk has gone (c x sleep seconds), which would stall the next run.
        for delay, figure, what in ((0.0, no_sleep, "no sleep"), (sleep, slept, "10 s sleep")):
            name = f"wrk-{key}{'' if delay else '-nosleep'}{suffix}"
            shown = f"{figure} requests in 30 s" if figure else "not published"
            targets.append(
                _demo(
                    name,
                    f"{title}, {'sleep ' + format(delay, 'g') + ' s' if delay else 'no sleep'}",
                    WRK,
                    service,
                    port,
                    n=WRK_CONNECTIONS,
                    c=WRK_CONNECTIONS,
                    delay=delay,
                    body=body,
                    notes=notes,
                    **load,
                    published=f"{shown} ({what}; wrk -t12 -c400 -d30s)",
                )
            )
    return tuple(targets)


WRK_DEMOS = _wrk_demos(published_load=False)
PUBLISHED = _wrk_demos(published_load=True)

DEMOS: tuple[Target, ...] = (*UWSGI_DEMOS, *GUNICORN_DEMOS, *SANIC_DEMOS, *WRK_DEMOS)

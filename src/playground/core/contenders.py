"""The 2026 contenders (`contenders/`): what to run today for the tutorial's own app.

`playground run --contenders` (or `make contenders`) runs them at the tutorial's load,
`playground scale --contenders` sweeps them up to 10,000 in flight; `make bench` does not.
Each is a `Target` with kind "contender", listed, run and reported like a scenario; the
report's contenders section (`playground.report.contendersection`) answers, for this app, which mode
holds the most requests per MB and per CPU-second and which ones quietly serialise.

1. `contenders/gunicorn-gthread.yml`: Gunicorn gthread, 4 x 50 and 1 x 200 threads.
2. `contenders/granian-wsgi.yml`: Granian serving the WSGI app, 200 blocking threads and
   a backpressure of 200.
3. `contenders/uvicorn-wsgi.yml`: Uvicorn + a2wsgi (200 threads), and asgiref's WsgiToAsgi,
   which serialises the WSGI app.
4. `contenders/flask-async-views.yml`: Flask `async def` views (aiohttp) on Gunicorn gthread
   1 x 200: each request still holds a thread.
5. `contenders/quart-hypercorn.yml`: Quart on Hypercorn with one shared aiohttp session,
   at aiohttp's default cap of 100 connections and with the cap lifted.
6. `contenders/freethreaded-gunicorn.yml`: Gunicorn gthread on CPython 3.13 built without
   the GIL, 4 x 50 and 1 x 200.
"""

from __future__ import annotations

from functools import partial

from playground.core.demos import Load
from playground.core.target import Target, same_port_target

GTHREAD = "contenders/gunicorn-gthread.yml"
GRANIAN = "contenders/granian-wsgi.yml"
UVICORN = "contenders/uvicorn-wsgi.yml"
ASYNC_VIEWS = "contenders/flask-async-views.yml"
QUART = "contenders/quart-hypercorn.yml"
FREETHREADED = "contenders/freethreaded-gunicorn.yml"

# The tutorial's load, and the one the serialising adapter gets instead: at c=200 it would
# take n x delay seconds (2000 s), so it runs at the tutorial's load for the one-at-a-time dev
# server, as that scenario does.
TUTORIAL: Load = {"n": 2000, "c": 200, "delay": 1.0}
ONE_AT_A_TIME: Load = {"n": 10, "c": 5, "delay": 1.0}

POOL_CAP = (
    "one aiohttp session shared by every request, at aiohttp's default cap of 100 "
    "connections to slow_api: past 100 in flight a request waits for a free connection, so "
    "at most 100 upstream calls run at once (100 / delay requests/s); a limit of the client "
    "library, measured as it ships"
)
NO_POOL_CAP = "the same Quart app with its aiohttp ClientSession's connection cap lifted (limit=0)"
WSGITOASGI = (
    "asgiref's WsgiToAsgi runs every request through one thread-sensitive executor: one "
    "request at a time, without an error or a warning (run at n=10 c=5: at c=200 a run "
    "would take n x delay seconds)"
)
ASYNC_VIEW = (
    "Flask runs each async view in an event loop of its own inside the worker thread: the "
    "request still holds that thread while it awaits"
)
FREETHREADED_NOTE = (
    "CPython 3.13 built with --disable-gil from Debian's python3.13 source package; the app "
    "refuses to start unless sys._is_gil_enabled() is False after every import"
)


_contender = partial(same_port_target, kind="contender")


CONTENDERS: tuple[Target, ...] = (
    _contender(
        "gthread-4x50", "Gunicorn gthread 4 x 50 threads", GTHREAD, "gthread_4x50", 3000, **TUTORIAL
    ),
    _contender(
        "gthread-1x200",
        "Gunicorn gthread 1 x 200 threads",
        GTHREAD,
        "gthread_1x200",
        3001,
        **TUTORIAL,
    ),
    _contender(
        "granian-wsgi",
        "Granian WSGI, 200 blocking threads, backpressure 200",
        GRANIAN,
        "granian",
        3000,
        **TUTORIAL,
    ),
    _contender(
        "uvicorn-a2wsgi", "Uvicorn + a2wsgi, 200 threads", UVICORN, "a2wsgi", 3000, **TUTORIAL
    ),
    _contender(
        "uvicorn-wsgitoasgi",
        "Uvicorn + asgiref WsgiToAsgi",
        UVICORN,
        "wsgitoasgi",
        3001,
        **ONE_AT_A_TIME,
        notes=(WSGITOASGI,),
    ),
    _contender(
        "flask-async-views",
        "Flask async views (aiohttp) on gthread 1 x 200",
        ASYNC_VIEWS,
        "async_views",
        3000,
        **TUTORIAL,
        notes=(ASYNC_VIEW,),
    ),
    _contender(
        "quart-hypercorn",
        "Quart on Hypercorn, shared aiohttp session (cap 100)",
        QUART,
        "quart",
        3000,
        **TUTORIAL,
        notes=(POOL_CAP,),
        scale_shape=(2, None),
    ),
    _contender(
        "quart-hypercorn-nocap",
        "Quart on Hypercorn, shared aiohttp session (no cap)",
        QUART,
        "quart_unlimited",
        3001,
        **TUTORIAL,
        notes=(NO_POOL_CAP,),
        scale_shape=(2, None),
    ),
    _contender(
        "nogil-gthread-4x50",
        "free-threaded CPython 3.13, Gunicorn gthread 4 x 50",
        FREETHREADED,
        "nogil_4x50",
        3000,
        **TUTORIAL,
        notes=(FREETHREADED_NOTE,),
    ),
    _contender(
        "nogil-gthread-1x200",
        "free-threaded CPython 3.13, Gunicorn gthread 1 x 200",
        FREETHREADED,
        "nogil_1x200",
        3001,
        **TUTORIAL,
        notes=(FREETHREADED_NOTE,),
    ),
)

# What each contender is there to show; the integration tests check it and the report
# measures it (its verdict column, playground.core.verdicts.overlap).
SERIALISED = frozenset({"uvicorn-wsgitoasgi"})
THREAD_PER_REQUEST = frozenset(
    {
        "gthread-4x50",
        "gthread-1x200",
        "granian-wsgi",
        "uvicorn-a2wsgi",
        "flask-async-views",
        "nogil-gthread-4x50",
        "nogil-gthread-1x200",
    }
)
ONE_THREAD = frozenset({"quart-hypercorn", "quart-hypercorn-nocap"})

# The scale sweep leaves out the one that serialises: at c=10,000 it would take hours.
SCALE: tuple[Target, ...] = tuple(t for t in CONTENDERS if t.name not in SERIALISED)

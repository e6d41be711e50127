"""A stand-in for a slow third-party API: `GET /?delay=S` waits S seconds, then answers.

The wait is ``asyncio.sleep``: thousands of requests can wait at once in one process, so the
upstream is never the bottleneck of a scenario (the runner's calibration run checks that).

An incident, for the war story (``playground story``): the third party gets slower for a while
and recovers by itself, whatever the clients ask for.

    POST /control/slowdown?extra=1.3&seconds=30   every answer comes 1.3 s later, for 30 s
    GET  /control/slowdown                        the incident now (JSON)
    DELETE /control/slowdown                      end it now
    GET  /control/stats                           requests waiting here now, and served

A call that carries the request's id (`X-Request-Id`, passed on by the app from nginx:
requestid.py) is written to the calls log (CALLS_LOG, /tmp/calls.log in the container) when its
answer is ready: `<id> <arrived> <answered>`, epoch seconds. The war story joins it with
nginx's access log to count the calls answered after nginx had already ended the request.

Outside an incident ``GET /?delay=S`` is exactly what it always was; during one it gives the
same answer (or the same 400) ``extra`` seconds later. The controls are as reachable as the
API itself: only inside the scenario's network.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TextIO

from aiohttp import web

import requestid
from querydelay import DelayError, max_delay, parse_delay

BODY = "slow api response"
# The longest incident one control request may start (an hour): it always ends by itself.
MAX_INCIDENT_S = 3600.0

STATE = web.AppKey("state", dict)
CALLS = web.AppKey("calls", TextIO)
CALLS_LOG = "/tmp/calls.log"


def _incident_extra(state: dict) -> float:
    """Seconds added to every answer right now (0 outside an incident)."""
    return state["extra"] if time.monotonic() < state["until"] else 0.0


def _log_call(request: web.Request, arrived: float) -> None:
    """One line in the calls log for a call that carries a request id (none without one)."""
    calls = request.app.get(CALLS)
    rid = requestid.valid(request.headers.get(requestid.HEADER))
    if calls is not None and rid is not None:
        calls.write(f"{rid} {arrived:.4f} {time.time():.4f}\n")


async def index(request: web.Request) -> web.Response:
    state = request.app[STATE]
    arrived = time.time()
    extra = _incident_extra(state)
    state["in_flight"] += 1
    try:
        try:
            delay = parse_delay(request.query.getall("delay", []))
        except DelayError as exc:
            await asyncio.sleep(extra)
            return web.Response(status=400, text=f"{exc}\n")
        await asyncio.sleep(delay + extra)
        state["served"] += 1
        _log_call(request, arrived)
        return web.Response(text=BODY)
    finally:
        state["in_flight"] -= 1


def _describe(state: dict) -> dict:
    remaining = max(0.0, state["until"] - time.monotonic())
    return {
        "extra": _incident_extra(state),
        "remaining": round(remaining, 3),
        "incidents": state["incidents"],
    }


def _control_seconds(request: web.Request, name: str, *, limit: float | None) -> float:
    """A control's number of seconds, by the same rule as `delay`; required, given once."""
    values = request.query.getall(name, [])
    if len(values) != 1:
        raise DelayError(f"{name} must be given once, as a number of seconds")
    try:
        return parse_delay(values, limit=limit)
    except DelayError:
        most = max_delay() if limit is None else limit
        raise DelayError(
            f"{name} must be a plain number of seconds between 0 and {most:g}, "
            f"got {values[0][:40]!a}"
        ) from None


async def slowdown(request: web.Request) -> web.Response:
    state = request.app[STATE]
    if request.method == "POST":
        try:
            extra = _control_seconds(request, "extra", limit=None)
            seconds = _control_seconds(request, "seconds", limit=MAX_INCIDENT_S)
        except DelayError as exc:
            return web.Response(status=400, text=f"{exc}\n")
        state.update(
            extra=extra, until=time.monotonic() + seconds, incidents=state["incidents"] + 1
        )
    elif request.method == "DELETE":
        state["until"] = 0.0
    return web.json_response(_describe(state))


async def stats(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return web.json_response(
        {"in_flight": state["in_flight"], "served": state["served"], **_describe(state)}
    )


def make_app(calls_log: str | None = None) -> web.Application:
    """The API; with `calls_log`, a file that gets a line per answered call with an id."""
    app = web.Application()
    app[STATE] = {"extra": 0.0, "until": 0.0, "incidents": 0, "in_flight": 0, "served": 0}
    if calls_log is not None:
        app[CALLS] = open(calls_log, "a", buffering=1, encoding="ascii")  # a line at a time

        async def close_calls(app: web.Application) -> None:
            app[CALLS].close()

        app.on_cleanup.append(close_calls)
    app.router.add_get("/", index)
    app.router.add_route("GET", "/control/slowdown", slowdown)
    app.router.add_route("POST", "/control/slowdown", slowdown)
    app.router.add_route("DELETE", "/control/slowdown", slowdown)
    app.router.add_get("/control/stats", stats)
    return app


def main() -> None:
    web.run_app(
        make_app(calls_log=os.environ.get("CALLS_LOG", CALLS_LOG)),
        host="0.0.0.0",
        port=int(os.environ.get("PORT", "4000")),
        # aiohttp's default listen queue is 128: a burst of a few hundred connections would
        # overflow it and cost those clients a SYN retransmit (about 1 s).
        backlog=int(os.environ.get("BACKLOG", "4096")),
        # One log line per request costs more CPU than the request itself at 200 rps.
        access_log=None,
        print=None,
    )


if __name__ == "__main__":
    main()

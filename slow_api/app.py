"""A stand-in for a slow third-party API: `GET /?delay=S` waits S seconds, then answers.

The wait is ``asyncio.sleep``: thousands of requests can wait at once in one process, so the
upstream is never the bottleneck of a scenario (the runner's calibration run checks that).
"""

from __future__ import annotations

import asyncio
import os

from aiohttp import web

from querydelay import DelayError, parse_delay

BODY = "slow api response"


async def index(request: web.Request) -> web.Response:
    try:
        delay = parse_delay(request.query.getall("delay", []))
    except DelayError as exc:
        return web.Response(status=400, text=f"{exc}\n")
    await asyncio.sleep(delay)
    return web.Response(text=BODY)


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/", index)
    return app


def main() -> None:
    web.run_app(
        make_app(),
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

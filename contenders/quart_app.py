"""Quart (the asyncio re-implementation of Flask's API): the same route as flask_app/app.py,
on one event loop, calling slow_api through one aiohttp session created at start-up.

One OS thread holds every request in flight: a waiting request is a coroutine, not a thread.
The shared session caps connections to slow_api at aiohttp's default of 100
(UPSTREAM_POOL_LIMIT); past that, requests wait for a free connection. That cap is part of
what is measured, not hidden: see contenders/quart-hypercorn.yml.
"""

from __future__ import annotations

import os

from quart import Quart, request

import aio_upstream
import requestid
from plaintext import install_error_pages, plain
from querydelay import DelayError, max_delay, parse_delay

app = Quart(__name__)
# Quart gives up on a response after 60 s by default; the scale runs wait up to MAX_DELAY.
app.config["RESPONSE_TIMEOUT"] = max_delay() + aio_upstream.UPSTREAM_GRACE_S + 30
install_error_pages(app)


@app.before_serving
async def open_client() -> None:
    app.extensions["slow_api"] = aio_upstream.session()


@app.after_serving
async def close_client() -> None:
    await app.extensions.pop("slow_api").close()


@app.get("/")
async def index():
    try:
        delay = parse_delay(request.args.getlist("delay"))
    except DelayError as exc:
        return plain(str(exc), 400)
    text, status = await aio_upstream.call_slow_api(
        app.extensions["slow_api"], delay, request.headers.get(requestid.HEADER)
    )
    return ("Hi there! " + text) if status == 200 else plain(text, status)


if __name__ == "__main__":  # pragma: no cover - the image runs Hypercorn
    app.run(port=int(os.environ.get("PORT_APP", "3000")))

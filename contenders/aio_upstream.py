"""The async twin of flask_app/app.py's one blocking call: GET slow_api with aiohttp.

Shared by the two async contenders (Flask `async def` views and Quart), so both answer
exactly as the WSGI app does: the API's text, or a 502/504 with one line saying why.
"""

from __future__ import annotations

import os

import aiohttp

import requestid
from querydelay import format_delay

API_URL = f"http://{os.environ.get('API_HOST', 'slow_api')}:{os.environ.get('PORT_API', '4000')}/"
UPSTREAM_GRACE_S = float(os.environ.get("UPSTREAM_GRACE", "5"))
CONNECT_TIMEOUT_S = float(os.environ.get("UPSTREAM_CONNECT_TIMEOUT", "5"))
# aiohttp's own default: one session holds at most 100 connections, and a request past that
# waits for one to free up. 0 lifts the cap.
POOL_LIMIT = int(os.environ.get("UPSTREAM_POOL_LIMIT", "100"))


def session() -> aiohttp.ClientSession:
    """A client session with the pool cap above (one per process for Quart, one per request
    for Flask's async views, whose every request runs in an event loop of its own)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=POOL_LIMIT))


async def call_slow_api(
    client: aiohttp.ClientSession, delay: float, request_id: str | None = None
) -> tuple[str, int]:
    """The API's text and 200, or a one-line reason and 502/504 (the request's id from nginx
    passed on, where it has one: requestid.py).

    No overall timeout: a request waiting for one of the pool's connections waits as long as
    it takes (the cap shows up as throughput, not as errors); once sent, the answer must come
    within the delay plus the grace, as in the WSGI app.
    """
    timeout = aiohttp.ClientTimeout(
        total=None, sock_connect=CONNECT_TIMEOUT_S, sock_read=delay + UPSTREAM_GRACE_S
    )
    try:
        async with client.get(
            API_URL,
            params={"delay": format_delay(delay)},
            headers=requestid.headers(request_id),
            timeout=timeout,
        ) as resp:
            if resp.status >= 400:
                return f"slow_api answered {resp.status}", 502
            return await resp.text(), 200
    except TimeoutError:
        return f"slow_api did not answer within {delay + UPSTREAM_GRACE_S:g} s", 504
    except aiohttp.ClientError as exc:
        return f"slow_api unreachable: {type(exc).__name__}", 502

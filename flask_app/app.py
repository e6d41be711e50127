"""The Flask app under test: plain, synchronous Flask that waits on a slow API.

Nothing here knows about threads, processes or gevent. How many requests it can have in
flight is decided entirely by the server that runs it (see the compose files).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import requests
import timing
from flask import Flask, request
from flask.typing import ResponseReturnValue

import remedies
import requestid
from plaintext import install_error_pages, plain
from querydelay import UPSTREAM_GRACE_S, DelayError, format_delay, parse_delay

API_URL = f"http://{os.environ.get('API_HOST', 'slow_api')}:{os.environ.get('PORT_API', '4000')}/"
CONNECT_TIMEOUT_S = float(os.environ.get("UPSTREAM_CONNECT_TIMEOUT", "5"))
# The remedies for a slow third party (docs/story.md), every one off unless its override sets
# it: an outbound timeout, a deadline, a circuit breaker, retries (remedies.py).
UPSTREAM_TIMEOUT_S = remedies.UPSTREAM_TIMEOUT_S
DEADLINE_S = remedies.DEADLINE_S

app = Flask(__name__)
install_error_pages(app)


def read_timeout(delay: float) -> float:
    """How long the call may wait for the answer: the delay asked for and a grace, or the
    app's own outbound timeout where one is set and shorter."""
    wait = delay + UPSTREAM_GRACE_S
    return wait if UPSTREAM_TIMEOUT_S is None else min(wait, UPSTREAM_TIMEOUT_S)


def waited(header: str | None, now: float) -> float | None:
    """Seconds since the request arrived at nginx, from `X-Request-Start: t=<epoch seconds>`;
    None without a readable header (the app then cannot know, and does the work)."""
    if not header or not header.startswith("t="):
        return None
    try:
        arrived = float(header[2:])
    except ValueError:
        return None
    return now - arrived if arrived == arrived else None  # NaN reads as unknown


def call_slow_api(delay: float, request_id: str | None = None) -> str:
    """The one blocking call: a fresh connection per request, as the tutorial does it (with
    the request's id from nginx passed on, where it has one: requestid.py)."""
    resp = requests.get(
        API_URL,
        params={"delay": format_delay(delay)},
        headers=requestid.headers(request_id),
        timeout=(CONNECT_TIMEOUT_S, read_timeout(delay)),
    )
    resp.raise_for_status()
    return resp.text


def timed(calls: list[float], call: Callable[[], str]) -> str:
    """The call, its start and end added to `calls` (a retried call adds each try's)."""
    calls.append(time.time())
    try:
        return call()
    finally:
        calls.append(time.time())


@app.get("/")
def index():
    began = time.time()
    calls: list[float] = []
    try:
        return answer(calls)
    finally:
        call = (calls[0], calls[-1]) if calls else None
        timing.record(
            requestid.valid(request.headers.get(requestid.HEADER)), began, call, time.time()
        )


def answer(calls: list[float]) -> ResponseReturnValue:
    """The page, or why not; `calls` gets the start and end of each call to slow_api."""
    try:
        delay = parse_delay(request.args.getlist("delay"))
    except DelayError as exc:
        return plain(str(exc), 400)
    if DEADLINE_S is not None:
        age = waited(request.headers.get("X-Request-Start"), time.time())
        if age is not None and age > DEADLINE_S:
            return plain(
                f"the request waited {age:.1f} s before the app could take it, past the "
                f"{DEADLINE_S:g} s its user waits: not calling slow_api",
                503,
            )
    try:
        rid = request.headers.get(requestid.HEADER)
        text = remedies.call(lambda: timed(calls, lambda: call_slow_api(delay, rid)))
    except remedies.Degraded:
        # The circuit breaker is open: a lesser page at once, marked so that nobody counts it
        # as the real one (the load generator does not).
        text, status, headers = plain("Hi there! (the third party is unavailable)", 200)
        return text, status, {**headers, "X-Degraded": "circuit-open"}
    except remedies.BudgetSpent as exc:
        return plain(f"slow_api failed and the retry budget is spent: {exc}", 503)
    except requests.Timeout:
        return plain(f"slow_api did not answer within {read_timeout(delay):g} s", 504)
    except requests.HTTPError as exc:
        answered = "an error" if exc.response is None else exc.response.status_code
        return plain(f"slow_api answered {answered}", 502)
    except requests.RequestException as exc:
        return plain(f"slow_api unreachable: {type(exc).__name__}", 502)
    return "Hi there! " + text

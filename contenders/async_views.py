"""Flask with an `async def` view: the same route as flask_app/app.py, calling slow_api with
aiohttp instead of requests.

Flask runs each async view to completion in an event loop of its own, inside the worker
thread that took the request (asgiref's async_to_sync). The view may await, but the thread
waits with it: a request still holds one worker thread, so threads grow with concurrency
exactly as with the synchronous app. Served here by Gunicorn gthread (see
contenders/flask-async-views.yml).
"""

from __future__ import annotations

from flask import Flask, request

import aio_upstream
import requestid
from plaintext import install_error_pages, plain
from querydelay import DelayError, parse_delay

app = Flask(__name__)
install_error_pages(app)


@app.get("/")
async def index():
    try:
        delay = parse_delay(request.args.getlist("delay"))
    except DelayError as exc:
        return plain(str(exc), 400)
    # A session per request: the event loop it would be bound to ends with the request.
    async with aio_upstream.session() as client:
        text, status = await aio_upstream.call_slow_api(
            client, delay, request.headers.get(requestid.HEADER)
        )
    return ("Hi there! " + text) if status == 200 else plain(text, status)

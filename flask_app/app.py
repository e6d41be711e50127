"""The Flask app under test: plain, synchronous Flask that waits on a slow API.

Nothing here knows about threads, processes or gevent. How many requests it can have in
flight is decided entirely by the server that runs it (see the compose files).
"""

from __future__ import annotations

import os

import requests
from flask import Flask, request

from plaintext import install_error_pages, plain
from querydelay import UPSTREAM_GRACE_S, DelayError, format_delay, parse_delay

API_URL = f"http://{os.environ.get('API_HOST', 'slow_api')}:{os.environ.get('PORT_API', '4000')}/"
CONNECT_TIMEOUT_S = float(os.environ.get("UPSTREAM_CONNECT_TIMEOUT", "5"))

app = Flask(__name__)
install_error_pages(app)


def call_slow_api(delay: float) -> str:
    """The one blocking call: a fresh connection per request, as the tutorial does it."""
    resp = requests.get(
        API_URL,
        params={"delay": format_delay(delay)},
        timeout=(CONNECT_TIMEOUT_S, delay + UPSTREAM_GRACE_S),
    )
    resp.raise_for_status()
    return resp.text


@app.get("/")
def index():
    try:
        delay = parse_delay(request.args.getlist("delay"))
    except DelayError as exc:
        return plain(str(exc), 400)
    try:
        text = call_slow_api(delay)
    except requests.Timeout:
        return plain(f"slow_api did not answer within {delay + UPSTREAM_GRACE_S:g} s", 504)
    except requests.HTTPError as exc:
        return plain(f"slow_api answered {exc.response.status_code}", 502)
    except requests.RequestException as exc:
        return plain(f"slow_api unreachable: {type(exc).__name__}", 502)
    return "Hi there! " + text

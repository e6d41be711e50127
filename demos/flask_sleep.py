"""The companion demos' Flask app: a route that does nothing but `time.sleep`.

No upstream and no I/O: whether two requests overlap depends only on the server, and on
whether something (gevent's or eventlet's monkey-patching) has swapped `time.sleep` for a
cooperative version by the time the handler runs. The handler looks `sleep` up on the
`time` module at every call, so a patch applied after this module was imported still counts.

    GET /?delay=S    sleeps S seconds (default DEFAULT_DELAY), answers
                     "Hi there! slept S s with time.sleep"
"""

from __future__ import annotations

import os
import time

from flask import Flask, request

from plaintext import install_error_pages, plain
from querydelay import DelayError, parse_delay

# The sleep when the client gives none: 1 s in the uWSGI demo, 10 s in the Gunicorn ones (the
# published runs'); the runner and the tests always say how long.
DEFAULT_DELAY = float(os.environ.get("DEFAULT_DELAY", "1"))

app = Flask(__name__)
install_error_pages(app)


@app.get("/")
def index():
    values = request.args.getlist("delay")
    try:
        delay = parse_delay(values) if values else DEFAULT_DELAY
    except DelayError as exc:
        return plain(str(exc), 400)
    time.sleep(delay)
    return plain(f"Hi there! slept {delay:g} s with time.sleep", 200)

"""The same Flask app, with `eventlet.monkey_patch()` as the very first thing, the way
eventlet's documentation asks for it. Served by Gunicorn 25.3's eventlet worker, or by the
sync worker to show that patching alone makes nothing concurrent."""

import eventlet

eventlet.monkey_patch()

from flask_sleep import app  # noqa: E402  (must come after patching)

__all__ = ["app"]

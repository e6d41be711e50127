"""Gunicorn's settings. The numbers a reader tweaks come from the compose file's environment."""

import os

bind = f"0.0.0.0:{os.environ.get('PORT_APP', '3000')}"
workers = int(os.environ.get("WORKERS", "1"))
# With threads > 1 and no worker class given, Gunicorn uses its `gthread` worker: a pool per
# process whose threads are started on demand, as requests arrive.
threads = int(os.environ.get("THREADS", "1"))
# Greenlets per gevent worker: the most requests one worker has in flight.
worker_connections = int(os.environ.get("WORKER_CONNECTIONS", "1000"))
# Gunicorn's default listen queue is already 2048 (the others' is 100-128); said explicitly
# so the scenarios' queues can be compared at a glance.
backlog = int(os.environ.get("BACKLOG", "2048"))
# A worker silent for this long is killed; it must outlast the longest allowed delay (60 s)
# plus the upstream grace, or a slow request would look like a hung worker.
timeout = 90
graceful_timeout = 5
# How long a connection may wait for its request: between two keep-alive requests, and (in the
# gevent worker) for the first one too. Past it the worker closes the connection unanswered,
# with the unread request still in the socket, so the client sees a reset. Gunicorn's default
# (2 s) is plenty until thousands of connections arrive at once: a worker then needs longer
# than that just to get round to reading each one (the scale overrides raise it).
# Set only when asked for: with `keepalive = 2` written out (Gunicorn's own default), the
# threaded scenario came out of the faults' c=2000 overload needing 9 s for a burst of 200
# instead of ~2 s (measured twice on 2026-11-23; unset, the same test passed).
if "KEEPALIVE" in os.environ:
    keepalive = int(os.environ["KEEPALIVE"])
# Gunicorn 25.1+ opens a control socket for `gunicornc`, by default under $HOME, which the
# unprivileged user cannot write to (/app belongs to root): put it where it can.
control_socket = "/tmp/gunicorn.ctl"

"""Hypercorn's settings. The numbers a reader tweaks come from the compose file's environment."""

import os

bind = [f"0.0.0.0:{os.environ.get('PORT_APP', '3000')}"]
# 0: serve in Hypercorn's own process. Any other number starts that many worker processes
# (multiprocessing's spawn) beside a parent that only supervises them: with 1, three processes
# (parent, worker, multiprocessing's tracker) for one event loop.
workers = int(os.environ.get("WORKERS", "0"))
# Hypercorn's default listen queue is 100: a c=200 burst would overflow it and cost a SYN
# retransmit (about 1 s) for the clients past it. Gunicorn's default, 2048, instead.
backlog = int(os.environ.get("BACKLOG", "2048"))
graceful_timeout = 5

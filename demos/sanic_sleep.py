"""The asyncio contrast: Sanic, one event loop, and two ways to wait inside an `async def`.

`blocking` calls `time.sleep`: nothing gives the loop control back, so the whole server waits
and requests are answered one after another. `concurrent` awaits `asyncio.sleep`: the loop
serves other requests meanwhile. The only difference is the one line in each handler.

    python sanic_sleep.py blocking      # or: concurrent
    gunicorn -k asgi sanic_sleep:concurrent   # Sanic as an ASGI app under Gunicorn
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from http import HTTPStatus

from sanic import Sanic, text
from sanic.exceptions import MethodNotAllowed, NotFound
from sanic.request import Request

from querydelay import DelayError, parse_delay

# The sleep when the client gives none: the published runs slept 10 s.
DEFAULT_DELAY = float(os.environ.get("DEFAULT_DELAY", "10"))

blocking = Sanic("blocking")
concurrent = Sanic("concurrent")


def delay_of(request: Request) -> float:
    values = request.args.getlist("delay")
    return parse_delay(values) if values else DEFAULT_DELAY


def refused(exc: DelayError):
    return text(f"{exc}\n", status=400)


@blocking.get("/")
async def sleep_blocking(request: Request):
    try:
        delay = delay_of(request)
    except DelayError as exc:
        return refused(exc)
    time.sleep(delay)  # blocks the event loop: every other request waits for this one
    return text(f"Hi there! slept {delay:g} s with time.sleep\n")


@concurrent.get("/")
async def sleep_concurrent(request: Request):
    try:
        delay = delay_of(request)
    except DelayError as exc:
        return refused(exc)
    await asyncio.sleep(delay)  # hands the loop back: other requests run meanwhile
    return text(f"Hi there! slept {delay:g} s with asyncio.sleep\n")


for _app in (blocking, concurrent):
    # One plain line, like the Flask apps, instead of Sanic's decorated error page.
    @_app.exception(NotFound, MethodNotAllowed)
    async def not_here(request: Request, exc: NotFound | MethodNotAllowed):
        status = HTTPStatus(exc.status_code)
        return text(
            f"{status.value} {status.phrase}: the only route is GET /?delay=SECONDS\n",
            status=status.value,
        )


if __name__ == "__main__":
    apps = {"blocking": blocking, "concurrent": concurrent}
    if len(sys.argv) != 2 or sys.argv[1] not in apps:
        sys.exit(f"usage: python {sys.argv[0]} blocking|concurrent")
    port = int(os.environ.get("PORT_APP", "3000"))
    # Sanic listens with a queue of 100 unless told otherwise: a burst of hundreds of wrk
    # connections would overflow it and cost the unlucky ones a SYN retransmit (about 1 s).
    backlog = int(os.environ.get("BACKLOG", "4096"))
    # One process, one event loop, like the one Gunicorn worker of the other demos (Sanic's
    # default adds a manager process); no access log (a line per request costs more than it).
    apps[sys.argv[1]].run(
        host="0.0.0.0",
        port=port,
        single_process=True,
        backlog=backlog,
        access_log=False,
        motd=False,
    )

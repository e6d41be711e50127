"""ApacheBench's command line: every `ab ...` the playground runs or shows is built here.

ab's flags, in the order they are written: ``-q`` (no progress lines), ``-r`` (keep going after
socket errors: without it the first reset or refused connection ends the run with no report),
``-t SECONDS`` (a time limit; it sets ab's request cap to 50,000, so ``-n`` comes after it and
lowers that cap again), ``-n`` requests, ``-c`` concurrency, ``-s SECONDS`` (whole seconds, and
beware: it limits the *inactivity of the whole run*, so when no connection makes progress for
that long ab exits without a report), ``-g PATH`` (ab's per-request file), then the URL.

What a command line implies is here too: the ``-n`` that leaves no connection unused while
the rounds finish together (:func:`ab_requests`), and the most requests/s ab can report for it
(:func:`ab_cap_rps`).
"""

from __future__ import annotations

import math

AB_MAX_CONCURRENCY = 20000
"""ab's historical ``MAX_CONCURRENCY`` ("Invalid Concurrency [Range 0..20000]").
The Debian build tried here (apache2-utils 2.4.71) accepted ``-c 200000``, so
the limit is enforced here rather than left to whichever ab is installed."""


def ab_command(
    *,
    url: str,
    requests: int,
    concurrency: int,
    timeout_s: float,
    time_limit_s: float | None = None,
    per_request_path: str | None = None,
    quiet: bool = False,
) -> list[str]:
    """``ab [-q] -r [-t SECONDS] -n N -c C -s TIMEOUT [-g PATH] URL`` (seconds rounded up)."""
    argv = ["ab", *(["-q"] if quiet else []), "-r"]
    if time_limit_s is not None:
        argv += ["-t", str(math.ceil(time_limit_s))]
    argv += ["-n", str(requests), "-c", str(concurrency), "-s", str(math.ceil(timeout_s))]
    if per_request_path is not None:
        argv += ["-g", per_request_path]
    return [*argv, url]


def ab_cap_rps(*, requests: int, concurrency: int, delay: float) -> float | None:
    """The highest requests/s ab can *report* for a server that takes ``delay`` s.

    ab sends its first request alone and opens the other ``c - 1`` connections
    only when it has returned (measured: ``-n 20 -c 10`` at 0.2 s takes 0.6 s,
    ``-n 10 -c 10`` takes 0.4 s). Even a server with unlimited parallelism
    therefore needs about ``n/c + 1`` rounds of ``delay``, so ab's own figure is
    capped at ``n / ((n/c + 1) * delay)`` -- for ``-n 2000 -c 200`` against a
    1 s upstream that is 181.8/s, not 200/s. The rounds really number
    ``1 + ceil((n - 1) / c)``, so the formula is exact when ``c`` divides ``n``
    and otherwise within one round (``-n 41 -c 10`` at 0.2 s: ab measured
    40.34/s against a cap of 40.2/s). None when ``delay`` is 0 (no cap to
    speak of).
    """
    if requests <= 0 or concurrency <= 0:
        raise ValueError(
            f"requests and concurrency must be positive, got n={requests}, c={concurrency}"
        )
    if delay < 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    if delay == 0:
        return None
    return requests / ((requests / concurrency + 1) * delay)


def ab_requests(*, rounds: int, concurrency: int) -> int:
    """The ``-n`` for ``rounds`` full rounds of ``c`` requests after ab's lone first one: ``rounds x c + 1``.

    Why the ``+ 1``: with ``-n`` a multiple of ``-c`` ab opens one connection
    more than it sends requests on. Read in ab.c (ApacheBench 2.3, httpd
    2.4.71, the version Debian trixie's apache2-utils builds):
    ``start_connect()`` opens a new connection whenever ``started < requests``,
    but ``started`` counts requests *written*, not connections opened; it is
    incremented at the end of ``write_request()``, which begins with ``if
    (started >= requests) return;``. When a connection's connect completes
    after the last request has been written, ab moves it to polling for input
    (``set_conn_state(c, STATE_CONNECTED)``) and calls ``write_request()``,
    which returns without writing. That connection then sits idle until the
    server gives up waiting for a request and closes it; ab reads 0 bytes,
    counts it in ``done`` as a finished request whose length differs from the
    document's (``err_length``) and, since it stops once ``done`` reaches
    ``-n``, leaves one real response unread. With ``-n c`` the surplus is the
    first slot's: its lone first request finishes, ab opens the other ``c - 1``
    connections, then reconnects the first slot while few have been written;
    the first slot's connect is the last to complete, and ``-n`` is reached
    without it (``strace``: ``c + 1`` connects, ``c`` writes). With ``-n k x
    c`` the same happens in the last round, when more slots reconnect in one
    pass than requests remain. It shows only when the server's wait for a
    request (uWSGI's ``socket-timeout``, nginx's ``client_header_timeout``,
    Gunicorn's ``keepalive``) is shorter than what is left of the run.

    With ``rounds x c + 1`` every round is full and every connection carries a
    request: the lone first, then ``rounds`` rounds of ``c`` (ab runs
    ``1 + ceil((n - 1) / c)`` rounds, :func:`ab_cap_rps`).

    That holds while the rounds finish together. Where the answers come back
    unevenly (``c`` above a thread pool's size) slots finish one by one and ab
    still opens one connection more than it writes on: 2,002 connections for
    ``-n 2001 -c 500`` against Gunicorn's 4 x 50 threads at a 2.5 s delay, in 10
    of 10 runs (SYNs counted in the app's network namespace). It costs a request
    only when the server closes it before the last answer; the scale profile's
    Gunicorn keeps it 60 s (scale/README.md).
    """
    if rounds < 1 or concurrency < 1:
        raise ValueError(f"rounds and concurrency must be positive, got {rounds} and {concurrency}")
    return rounds * concurrency + 1

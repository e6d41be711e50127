"""The bonus app: per request, a slow API call and a slow database query, one after the other.

The module itself is plain Flask + psycopg2; the entry points decide how it is patched:
``app`` patches the standard library with gevent only, ``patched`` adds psycogreen. psycopg2
is a C extension that talks to libpq, not through Python sockets, so gevent's stdlib patch
cannot make its waits cooperative: without psycogreen, ``pg_sleep`` blocks the whole worker.
"""

from __future__ import annotations

import os

import psycopg2
import requests
from flask import Flask, request

from plaintext import install_error_pages, plain
from querydelay import UPSTREAM_GRACE_S, DelayError, format_delay, parse_delay

API_URL = f"http://{os.environ.get('API_HOST', 'slow_api')}:{os.environ.get('PORT_API', '4000')}/"
CONNECT_TIMEOUT_S = int(os.environ.get("DB_CONNECT_TIMEOUT", "3"))
DSN = {
    "host": os.environ.get("POSTGRES_HOST", "postgres"),
    "port": int(os.environ.get("POSTGRES_PORT", "5432")),
    # The playground's documented example credentials, nothing secret.
    "user": os.environ.get("POSTGRES_USER", "example"),
    "password": os.environ.get("POSTGRES_PASSWORD", "example"),
    "dbname": os.environ.get("POSTGRES_DB", "example"),
}

app = Flask(__name__)
install_error_pages(app)


def query_db(seconds: float) -> str:
    """``SELECT NOW(), pg_sleep(S)`` on a fresh connection, bounded by a statement timeout."""
    timeout_ms = int((seconds + UPSTREAM_GRACE_S) * 1000)
    conn = psycopg2.connect(
        connect_timeout=CONNECT_TIMEOUT_S, options=f"-c statement_timeout={timeout_ms}", **DSN
    )
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT NOW(), pg_sleep(%s)", (seconds,))
            now, _ = cur.fetchone()
    finally:
        conn.close()
    return now.isoformat()


@app.get("/")
def index():
    try:
        delay = parse_delay(request.args.getlist("delay"))
    except DelayError as exc:
        return plain(str(exc), 400)
    half = delay / 2
    try:
        resp = requests.get(
            API_URL,
            params={"delay": format_delay(half)},
            timeout=(CONNECT_TIMEOUT_S, half + UPSTREAM_GRACE_S),
        )
        resp.raise_for_status()
    except requests.Timeout:
        return plain(f"slow_api did not answer within {half + UPSTREAM_GRACE_S:g} s", 504)
    except requests.RequestException as exc:
        return plain(f"slow_api unreachable or failing: {type(exc).__name__}", 502)
    try:
        now = query_db(half)
    except psycopg2.Error as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return plain(f"database unavailable: {reason}", 503)
    # The tutorial's greeting, as the plain app answers it.
    return f"Hi there! {resp.text}\npostgres NOW() = {now}\n"

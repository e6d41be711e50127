"""Container health check: one real request through the whole chain, `GET /?delay=0`.

Used by every Python service's `healthcheck:` so that `docker compose up --wait` returns only
when the server answers for real (and, for the Flask apps, when slow_api and postgres answer
too). It speaks HTTP, or the binary uwsgi protocol when ``PROTOCOL=uwsgi`` (the app behind
nginx's ``uwsgi_pass`` does not answer HTTP at all). Standard library only.
"""

from __future__ import annotations

import os
import socket
import struct
import sys

TIMEOUT_S = 5.0
PATH, QUERY = "/", "delay=0"


def _uwsgi_packet(port: int) -> bytes:
    """A uwsgi protocol request: a 4-byte header then length-prefixed key/value pairs."""
    env = {
        "REQUEST_METHOD": "GET",
        "REQUEST_URI": f"{PATH}?{QUERY}",
        "PATH_INFO": PATH,
        "QUERY_STRING": QUERY,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": str(port),
        "HTTP_HOST": f"127.0.0.1:{port}",
        "REMOTE_ADDR": "127.0.0.1",
    }
    body = b"".join(
        struct.pack("<H", len(k)) + k + struct.pack("<H", len(v)) + v
        for k, v in ((k.encode(), v.encode()) for k, v in env.items())
    )
    return struct.pack("<BHB", 0, len(body), 0) + body


def check(*, port: int, protocol: str) -> str | None:
    """Return None when the server answered 200, otherwise the reason it is not healthy."""
    if protocol == "uwsgi":
        request = _uwsgi_packet(port)
    else:
        request = f"GET {PATH}?{QUERY} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as conn:
            conn.sendall(request)
            status_line = conn.makefile("rb").readline().decode("latin-1").strip()
    except OSError as exc:
        return f"no answer on port {port}: {exc}"
    parts = status_line.split()
    if len(parts) < 2 or parts[1] != "200":
        return f"port {port} answered {status_line!r}"
    return None


def main() -> int:
    port = int(os.environ.get("PORT_APP") or os.environ.get("PORT") or "3000")
    problem = check(port=port, protocol=os.environ.get("PROTOCOL", "http"))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Hostile input for the three apps, shared by the unit fuzz (local servers) and the
integration fuzz (the real containers): hypothesis strategies for the query string and
headers, the raw HTTP request they make, and the answer the `delay` rule predicts.

Every request is sent as raw bytes over a fresh socket, so the servers' own HTTP parsers
(Werkzeug, aiohttp, Gunicorn, gevent.pywsgi, uWSGI) see exactly what a hostile client sends.
"""

from __future__ import annotations

import math
from urllib.parse import quote

from hypothesis import strategies as st

# The live containers run with MAX_DELAY=0.2 for the fuzz, so every delay the rule accepts
# is answered within 0.2 s; everything above it must be refused like any other bad value.
FUZZ_MAX_DELAY = 0.2
# A request line or header block past this is "oversized": servers may refuse it themselves
# (Gunicorn's request-line limit is 4094 bytes, aiohttp's and gevent.pywsgi's about 8 KB).
OVERSIZED = 4000
# What a server may answer to an oversized request instead of the app: 400 (aiohttp, nginx
# for a header), 414 URI Too Long, 431 Request Header Fields Too Large.
SERVER_LIMIT_CODES = {400, 414, 431}

SPECIALS = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e3",
    "1E-3",
    "1e-400",
    "1e400",
    "0x10",
    "+0.1",
    "-0",
    "-0.0",
    " 0.1",
    "0.1 ",
    "0.1\t",
    "0.1\x00",
    "0.1\n",
    "١",
    "１",
    "٠.١",
    "0.1",
    ".1",
    "0.",
    ".",
    "",
    "0",
    "00000000000.1",
    "000000000000.1",
    "0000000000000.1",
    "0.200000000",
    "0.2000000001",
    "0.20",
    "0.21",
    "1_0",
    "0.1_0",
    "0,1",
    "1/10",
    "0.1.2",
    "9" * 13,
    "9" * 400,
    "0." + "0" * 9 + "1",
    "0." + "0" * 8 + "1",
    "60",
    "61",
    "1e1",
    "true",
    "null",
    "[]",
    "0.1%",
    "%30.1",
    "٣",
    "𝟎.𝟏",
    "½",
]

numbers = st.from_regex(r"\A[0-9]{0,14}(\.[0-9]{0,11})?\Z", fullmatch=True)
float_texts = st.floats(allow_nan=True, allow_infinity=True).flatmap(
    lambda x: st.sampled_from(
        [
            repr(x),
            str(x),
            f"{x:.3f}" if math.isfinite(x) else str(x),
            f"{x:e}" if math.isfinite(x) else repr(x),
        ]
    )
)
# Up to 24 KB once percent-encoded (é is 6 bytes): past every server's URL limit but one, and
# within uWSGI's 64 KB buffer, which holds the URL twice (REQUEST_URI and QUERY_STRING); the
# malformed-request table sends bigger ones.
long_values = st.tuples(
    st.sampled_from(["9", "0", "1.", ".5", "a", "é", "%", " "]), st.integers(1000, 4000)
).map(lambda t: (t[0] * t[1])[: t[1]])
# Accepted delays (at most 0.2 s), written the ways the rule allows: 0.0500, .0500, 000.1, 0
small_valid = st.tuples(
    st.integers(0, 2000),
    st.sampled_from(["{p}{v:.4f}", "{p}{v:.1f}", "{p}{v:g}", ".{n:04d}"]),
    st.sampled_from(["", "0", "000"]),
).map(lambda t: t[1].format(p=t[2], v=t[0] / 10000, n=t[0]))
delay_values = st.one_of(
    small_valid,
    small_valid,
    small_valid,
    numbers,
    float_texts,
    st.sampled_from(SPECIALS),
    st.text(max_size=40),
    long_values,
)

keys = st.one_of(
    st.sampled_from(["delay"] * 6 + ["Delay", "DELAY", "delay[]", "delay ", "x", "", "de%6Cay"]),
    st.text(max_size=10),
)
# (key, value, bare): `bare` sends the key alone, without `=value`.
# At least one `delay` key: without one the app uses its default of 1 s, which is slow to
# fuzz and (with MAX_DELAY=0.2) refused by slow_api; the default has its own plain tests.
query_pairs = st.lists(
    st.tuples(keys, delay_values, st.sampled_from([False] * 5 + [True])), max_size=5
).filter(lambda pairs: any(k == "delay" for k, _, _ in pairs))

FORBIDDEN_HEADERS = {
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "expect",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-connection",
    "http2-settings",
}
header_names = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9-]{0,30}\Z", fullmatch=True).filter(
    lambda n: n.lower() not in FORBIDDEN_HEADERS
)
# Field values: visible ASCII, spaces and tabs inside, and obs-text (0x80-0xFF) bytes.
header_values = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"), max_size=100
)
long_header = st.integers(1000, 6000).map(lambda n: ("X-Long", "v" * n))
# Mostly ordinary headers; now and then one long enough to be oversized.
header_lists = st.tuples(
    st.lists(st.tuples(header_names, header_values), max_size=8),
    st.sampled_from([False] * 7 + [True]),
    long_header,
).map(lambda t: t[0] + [t[2]] if t[1] else t[0])


def query_string(pairs: list[tuple[str, str, bool]]) -> str:
    """Every key and value percent-encoded (UTF-8), so all servers split it the same way."""
    return "&".join(
        quote(k, safe="") if bare else f"{quote(k, safe='')}={quote(v, safe='')}"
        for k, v, bare in pairs
    )


def build_request(
    *, pairs: list[tuple[str, str, bool]], headers: list[tuple[str, str]], host: str
) -> bytes:
    q = query_string(pairs)
    lines = [
        f"GET /{'?' + q if q else ''} HTTP/1.1",
        f"Host: {host}",
        *(f"{name}: {value}" for name, value in headers),
        "Connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# The rule as docs/scenarios.md gives it to a reader: "a plain decimal number of seconds (ASCII
# digits, at most 12 before the point and 9 after) between 0 and MAX_DELAY, given once". Read
# from the page, not from the rule's code (common/querydelay.py), so the fuzz can catch the
# code drifting from what the page promises.
DIGITS = frozenset("0123456789")
WHOLE_DIGITS, DECIMALS = 12, 9


def documented_delay(value: str, *, limit: float) -> bool:
    """Whether one `delay` value is what the page calls a plain decimal within the limit."""
    whole, _, fraction = value.partition(".")
    plain = (
        bool(whole or fraction)
        and set(whole) <= DIGITS
        and set(fraction) <= DIGITS
        and len(whole) <= WHOLE_DIGITS
        and len(fraction) <= DECIMALS
    )
    return plain and float(value) <= limit


def expected_status(pairs: list[tuple[str, str, bool]], *, limit: float = FUZZ_MAX_DELAY) -> int:
    """200 where the page's rule accepts what the server will decode from the query (no
    `delay` at all is the default, 1 s), else 400."""
    values = ["" if bare else v for k, v, bare in pairs if k == "delay"]
    if not values:
        return 200
    return 200 if len(values) == 1 and documented_delay(values[0], limit=limit) else 400


def oversized(request: bytes) -> bool:
    head = request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    return len(head[0]) > OVERSIZED or sum(len(h) for h in head[1:]) > OVERSIZED


def allowed_statuses(request: bytes, expected: int) -> set[int]:
    return {expected} | (SERVER_LIMIT_CODES if oversized(request) else set())


# Sends one raw request and reads the status line: (status, None) or (None, why not). Kept as
# source text as well, so the integration fuzz can run the very same code inside a container
# to reach slow_api, which is not published.
EXCHANGE_SRC = r"""
import socket

def exchange(raw, host, port, timeout):
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(raw)
            line = sock.makefile("rb").readline(65536)
    except socket.timeout:
        return None, "timeout"
    except ConnectionRefusedError:
        return None, "refused"
    except ConnectionResetError:
        return None, "reset"
    except OSError as exc:
        return None, type(exc).__name__
    if not line:
        return None, "closed"
    parts = line.split()
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
        return int(parts[1]), None
    return None, "garbled: " + line[:80].decode("latin-1")
"""
_namespace: dict = {}
exec(EXCHANGE_SRC, _namespace)
exchange = _namespace["exchange"]

"""The request's id, passed from nginx through the app to the third party.

In the war story nginx gives every request an id (`$request_id`, 32 hex digits) in the
`X-Request-Id` header and writes it in its access log. The apps pass it on, unchanged, on their
call to slow_api, which writes each call it answered (the id, when the call arrived, when its
answer was ready) to its calls log. Joined on the id after a run, the two logs count the calls
made for requests nginx had already ended: work the third party did for nobody.

An id is passed on only when it looks like one (letters, digits, `.`, `_`, `-`, at most 64):
anything else in the header is ignored, never an error and never a line of its own in a log.
"""

from __future__ import annotations

import re

HEADER = "X-Request-Id"
_ID = re.compile(r"[0-9A-Za-z._-]{1,64}", re.ASCII)


def valid(value: str | None) -> str | None:
    """The id if `value` is one, else None."""
    return value if value is not None and _ID.fullmatch(value) else None


def headers(value: str | None) -> dict[str, str]:
    """The header to send on with the call to the third party: the id, or nothing."""
    rid = valid(value)
    return {HEADER: rid} if rid else {}

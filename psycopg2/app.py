"""Bonus entry point WITHOUT psycogreen: gevent patches the standard library only.

The slow API call becomes cooperative; ``pg_sleep`` does not, so inside one gevent worker the
database waits run one after another.
"""

from gevent import monkey

monkey.patch_all()

from bonus import app  # noqa: E402

__all__ = ["app"]

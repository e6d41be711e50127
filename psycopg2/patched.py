"""Bonus entry point WITH psycogreen: gevent patches the stdlib, psycogreen makes psycopg2 yield.

``patch_psycopg()`` installs a wait callback in psycopg2 so that libpq's waits go through
gevent's hub: a request sleeping in PostgreSQL no longer blocks the other greenlets.
"""

from gevent import monkey

monkey.patch_all()

from psycogreen.gevent import patch_psycopg  # noqa: E402

patch_psycopg()

from bonus import app  # noqa: E402

__all__ = ["app"]

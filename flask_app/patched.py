"""The same app, for gevent servers: patch the standard library first, then import it.

``patch_all()`` must run before ``requests`` (and so ``socket``, ``ssl``, ``threading``) is
imported anywhere, which is why it is the first statement and the app is imported after it.
"""

from gevent import monkey

monkey.patch_all()

from app import app  # noqa: E402  (must come after patching)

__all__ = ["app"]

"""The WSGI app of flask_app/app.py, unchanged, behind two WSGI-to-ASGI adapters for Uvicorn.

- `a2wsgi_app`: a2wsgi's WSGIMiddleware, which runs each request in a thread pool of its own
  (10 threads by default; A2WSGI_THREADS, 200 here, sized for the tutorial's c=200).
- `wsgitoasgi_app`: asgiref's WsgiToAsgi, the adapter Flask's docs point to. It runs the WSGI
  app through asgiref's sync_to_async in thread-sensitive mode: every call goes to one shared
  thread, one at a time, so the app serves one request at a time however many are in flight.
"""

from __future__ import annotations

import os

from a2wsgi import WSGIMiddleware
from asgiref.wsgi import WsgiToAsgi

from app import app

a2wsgi_app = WSGIMiddleware(app, workers=int(os.environ.get("A2WSGI_THREADS", "200")))
wsgitoasgi_app = WsgiToAsgi(app)

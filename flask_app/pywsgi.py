"""Serve the app with gevent's own WSGI server: one process, one greenlet per request."""

from gevent import monkey

monkey.patch_all()

import os  # noqa: E402

from gevent.pywsgi import WSGIServer  # noqa: E402

from app import app  # noqa: E402

if __name__ == "__main__":
    port = int(os.environ.get("PORT_APP", "3000"))
    # gevent.pywsgi listens with a queue of 128 unless told otherwise: a c=200 burst would
    # overflow it and cost the unlucky clients a SYN retransmit (about 1 s).
    backlog = int(os.environ.get("BACKLOG", "4096"))
    print(f"gevent.pywsgi serving app:app on 0.0.0.0:{port} (backlog {backlog})", flush=True)
    WSGIServer(("0.0.0.0", port), app, backlog=backlog, log=None).serve_forever()

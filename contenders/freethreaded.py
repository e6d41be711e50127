"""The WSGI app of flask_app/app.py on a free-threaded CPython, refusing to run with a GIL.

A free-threaded build turns the GIL back on, with only a warning, as soon as it imports an
extension module that does not declare itself free-thread safe (or when PYTHON_GIL=1). This
module imports the app and everything it needs first, then checks: if the GIL is on, the
server must not start, because its figures would be the GIL's.
"""

from __future__ import annotations

import sys
import sysconfig

from app import app  # noqa: F401  (Gunicorn serves freethreaded:app)


def gil_problem() -> str | None:
    """None when this interpreter runs without a GIL, else why not."""
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        return f"{sys.executable} is not a free-threaded build (Py_GIL_DISABLED is not set)"
    if sys._is_gil_enabled():
        return (
            "the GIL is enabled on this free-threaded build: an imported extension module "
            "is not marked free-thread safe, or PYTHON_GIL=1 is set"
        )
    return None


if (problem := gil_problem()) is not None:
    raise RuntimeError(f"refusing to serve: {problem}")

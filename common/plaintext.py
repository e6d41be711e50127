"""Plain-text answers for the Flask apps: a status and one line saying why, never an HTML page."""

from __future__ import annotations

from flask import Flask

ONLY_ROUTE = "the only route is GET /?delay=SECONDS"


def plain(text: str, status: int) -> tuple[str, int, dict[str, str]]:
    return f"{text}\n", status, {"Content-Type": "text/plain; charset=utf-8"}


def install_error_pages(app: Flask) -> None:
    """404 and 405 as one plain line pointing at the one route there is."""

    @app.errorhandler(404)
    @app.errorhandler(405)
    def not_here(exc):
        return plain(f"{exc.code} {exc.name}: {ONLY_ROUTE}", exc.code)

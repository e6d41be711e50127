"""The Flask concurrency playground's runner: brings scenarios up, loads them, reports."""

"""The load tools, one module per job: each tool's command line (every `ab` argv from `ab.py`),
the parsers of their reports, and the `LoadResult` they come to (`output.py`)."""

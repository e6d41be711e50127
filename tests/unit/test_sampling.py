"""sampling.py: what is read from /proc about the server's processes."""

from __future__ import annotations

import os
from pathlib import Path

from playground.model import Sample
from playground.sampling import Series, combine, open_files_limit

LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            {soft:<20} 1048576              files
"""


def proc_with_limits(tmp_path: Path, soft: str) -> Path:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "limits").write_text(LIMITS.format(soft=soft))
    return tmp_path


def test_the_soft_open_files_limit_is_read_from_proc(tmp_path: Path) -> None:
    assert open_files_limit(7, proc=proc_with_limits(tmp_path, "1024")) == 1024
    assert open_files_limit(os.getpid()) is not None  # this very process, on Linux


def test_no_limit_when_unlimited_gone_or_unknown(tmp_path: Path) -> None:
    assert open_files_limit(7, proc=proc_with_limits(tmp_path, "unlimited")) is None
    assert open_files_limit(8, proc=tmp_path) is None  # the process has gone
    assert open_files_limit(None) is None


def test_series_are_summed_sample_by_sample_into_the_models_samples() -> None:
    a = Series("app", [Sample(0.0, 3, 1, 10.0, 5.0), Sample(0.5, 4, 1, 11.0, 6.0)])
    b = Series("worker", [Sample(0.01, 2, 2, 20.0, 1.25)])
    assert combine([a, b]) == [Sample(t=0.0, threads=5, processes=3, rss_mb=30.0, cpu_pct=6.25)]
    assert combine([]) == []

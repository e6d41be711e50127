"""Copy recorded runs into tests/data (called by record-fixtures.sh).

* results_recorded.json: the main run's results.json as the runner wrote it.
* results_partial.json: the same run as it stood on disk after its first two entries (the
  runner saves after every entry, so an interrupted run is exactly such a prefix, with
  finished_at null).
* results_sweep.json: the sweep run's results.json.
* ab_devserver_serial_n10_c5_1s.{txt,tsv}: ab's report and per-request file of the serial
  dev server at the tutorial's load (the steady-state test's capture).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--main", type=Path, required=True)
    parser.add_argument("--sweep", type=Path, required=True)
    args = parser.parse_args()
    main_run = json.loads((args.main / "results.json").read_text())
    (DATA / "results_recorded.json").write_text(json.dumps(main_run, indent=2) + "\n")
    partial = {**main_run, "finished_at": None, "scenarios": main_run["scenarios"][:1]}
    (DATA / "results_partial.json").write_text(json.dumps(partial, indent=2) + "\n")
    sweep = json.loads((args.sweep / "results.json").read_text())
    (DATA / "results_sweep.json").write_text(json.dumps(sweep, indent=2) + "\n")
    for suffix in ("txt", "tsv"):
        shutil.copyfile(
            args.main / "raw" / f"devserver-c5-r1.{suffix}",
            DATA / f"ab_devserver_serial_n10_c5_1s.{suffix}",
        )


if __name__ == "__main__":
    main()

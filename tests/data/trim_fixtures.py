"""Copy recorded runs into tests/data (called by record-fixtures.sh).

* results_recorded.json: the main run's results.json as the runner wrote it.
* results_partial.json: the same run as it stood on disk after its first two entries (the
  runner saves after every entry, so an interrupted run is exactly such a prefix, with
  finished_at null).
* results_sweep.json: the sweep run's results.json.
* ab_devserver_serial_n10_c5_1s.{txt,tsv}: ab's report and per-request file of the serial
  dev server at the tutorial's load (the steady-state test's capture).

Every results file is scrubbed of the machine that recorded it: the temporary results folder
in its command line becomes `$out/...` (record-fixtures.sh's name for it), and the kernel,
platform and host name are left out. `trim_fixtures.py --scrub FILE...` scrubs files already
recorded. tests/unit/test_docs.py checks that nothing of the kind is left.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent
LEFT_OUT = "left out of the fixture"
# The machine's own facts in results.json's environment (playground.core.environment.collect).
MACHINE_KEYS = ("kernel", "platform", "hostname")


def scrub(run: dict) -> dict:
    """The run without its recording machine: results folder, kernel, platform, host name."""
    command = run.get("command")
    if command:
        run["command"] = re.sub(
            r"(--results-dir[ =])(\S+)",
            lambda m: f"{m.group(1)}$out/{Path(m.group(2)).name}",
            command,
        )
    environment = run.get("environment") or {}
    for key in MACHINE_KEYS:
        if key in environment:
            environment[key] = LEFT_OUT
    # A run folder named anywhere else (a story's `docker run --volume FOLDER/raw:/out`).
    text = re.sub(
        r"/(?:tmp|work|root|home)/[^\s\"':]*/(\d{8}-\d{6}[\w-]*)", r"$out/\1", json.dumps(run)
    )
    return json.loads(text)


def write(path: Path, run: dict) -> None:
    path.write_text(json.dumps(scrub(run), indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--main", type=Path)
    parser.add_argument("--sweep", type=Path)
    parser.add_argument("--scrub", type=Path, nargs="+", metavar="FILE", default=[])
    args = parser.parse_args()
    for path in args.scrub:
        write(path, json.loads(path.read_text()))
    if args.scrub and not (args.main or args.sweep):
        return
    if not (args.main and args.sweep):
        parser.error("--main and --sweep are both needed to record")
    main_run = json.loads((args.main / "results.json").read_text())
    write(DATA / "results_recorded.json", main_run)
    partial = {**main_run, "finished_at": None, "scenarios": main_run["scenarios"][:1]}
    write(DATA / "results_partial.json", partial)
    write(DATA / "results_sweep.json", json.loads((args.sweep / "results.json").read_text()))
    for suffix in ("txt", "tsv"):
        shutil.copyfile(
            args.main / "raw" / f"devserver-c5-r1.{suffix}",
            DATA / f"ab_devserver_serial_n10_c5_1s.{suffix}",
        )


if __name__ == "__main__":
    main()

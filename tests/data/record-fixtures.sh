#!/bin/sh
# Re-record the results fixtures (tests/data/results_*.json and the serial dev server's ab
# capture) from real runs of the runner. Needs Docker and the project's images (make images);
# about 6 minutes. Run it from anywhere:
#     tests/data/record-fixtures.sh
# Nothing here is written by hand: the fixtures are the runner's own results.json, trimmed and
# scrubbed of this machine (its temporary folder, kernel and host name; see trim_fixtures.py).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
cd "$root"
# The nine scenarios' two extremes at the tutorial's loads, twice each (for the spread), with
# the calibration; the serial dev server's n=10 c=5 run is the steady-state test's capture.
.venv/bin/playground run devserver bonus-psycopg2 bonus-psycogreen gevent-pywsgi \
    --repeat 2 --no-build -q --results-dir "$out/main"
# A small sweep: a thread per request against one event loop, at two concurrencies.
.venv/bin/playground run devserver-threads gevent-pywsgi --sweep 10,50 -n 100 -c 10 \
    --delay 0.5 --no-calibration --no-build -q --results-dir "$out/sweep"
.venv/bin/python tests/data/trim_fixtures.py --main "$out/main/latest" --sweep "$out/sweep/latest"
rm -rf "$out"

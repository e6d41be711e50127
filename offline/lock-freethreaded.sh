#!/usr/bin/env bash
# Re-pin the free-threaded contender's requirements with the free-threaded interpreter itself
# (run by `make lock` in contenders/Dockerfile.freethreaded's build-python stage, whose
# /opt/python3.13t is CPython 3.13 built with --disable-gil), the way that image installs them:
# the build image's pip running under the target interpreter (`pip --python`), so markers and
# wheels are resolved for cp313t. The GIL image's pins (contenders/requirements.txt, locked
# first by lock.sh) are constraints, so the two Pythons run the same versions.
set -euo pipefail
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
header='# Pinned with free-threaded CPython 3.13 by `make lock` from requirements-freethreaded.in,'
header+=$'\n''# at the versions of requirements.txt (the GIL image): edit the .in, then re-lock.'

/opt/python3.13t/bin/python3.13t -c 'import sys; assert not sys._is_gil_enabled(), "has a GIL"'
/opt/python3.13t/bin/python3.13t -m venv --without-pip /tmp/freethreaded
python3 -m venv /tmp/pip
pip=(/tmp/pip/bin/pip --python /tmp/freethreaded/bin/python)
"${pip[@]}" install -q -r contenders/requirements-freethreaded.in -c contenders/requirements.txt
{ echo "$header"; "${pip[@]}" freeze; } > contenders/requirements-freethreaded.txt
echo "locked: contenders/requirements-freethreaded.txt with $(/tmp/freethreaded/bin/python -VV)"

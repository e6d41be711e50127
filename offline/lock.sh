#!/usr/bin/env bash
# Re-pin every image's Python requirements from its requirements.in, with the images' Python
# (run by `make lock` inside the build image). One resolution for the Flask image and the
# bonus together, so the two images share exact versions; the contenders' image is resolved
# against the Flask image's pins, so the WSGI contenders run the same libraries. The
# free-threaded image is locked after this, with its own interpreter (lock-freethreaded.sh).
set -euo pipefail
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
export UWSGI_PROFILE_OVERRIDE="ssl=false;pcre=false;xml=false;json=false;yaml=embedded;routing=false"
header='# Pinned with Python 3.13 by `make lock` from requirements.in: edit that, then re-lock.'

python3 -m venv /tmp/flask && /tmp/flask/bin/pip install -q -r flask_app/requirements.in -r psycopg2/requirements.in
python3 -m venv /tmp/api && /tmp/api/bin/pip install -q -r slow_api/requirements.in
bonus=$(grep -vE '^\s*(#|$)' psycopg2/requirements.in | sed 's/==.*//' | tr 'A-Z' 'a-z')
is_bonus() { grep -qxiF "$(echo "$1" | sed 's/==.*//')" <<<"$bonus"; }
{
  echo "$header"
  /tmp/flask/bin/pip freeze | while read -r line; do
    is_bonus "$line" && continue
    # Keep the extra, so the gevent worker's `packaging` stays a declared need.
    case "$line" in gunicorn==*) echo "gunicorn[gevent]==${line#gunicorn==}" ;; *) echo "$line" ;; esac
  done
} > flask_app/requirements.txt
{
  echo "$header"
  echo "# Installed on top of ../flask_app/requirements.txt."
  # `if`, not `&&`: a last line that is not the bonus's would end the loop, and under
  # pipefail the script, with status 1 and no message.
  /tmp/flask/bin/pip freeze | while read -r line; do if is_bonus "$line"; then echo "$line"; fi; done
} > psycopg2/requirements.txt
{ echo "$header"; /tmp/api/bin/pip freeze; } > slow_api/requirements.txt
# The companion demos' own images: the legacy eventlet Gunicorn and Sanic, each on its own.
for demo in legacy sanic; do
  python3 -m venv "/tmp/$demo" && "/tmp/$demo/bin/pip" install -q -r "demos/requirements-$demo.in"
  { echo "${header/requirements.in/requirements-$demo.in}"; "/tmp/$demo/bin/pip" freeze; } \
    > "demos/requirements-$demo.txt"
done
# The contenders' image (GIL CPython): the Flask image's pins as constraints, without the
# extra (pip takes no extras in a constraints file).
sed 's/\[[a-z,]*\]==/==/' flask_app/requirements.txt > /tmp/flask-constraints.txt
python3 -m venv /tmp/contenders \
  && /tmp/contenders/bin/pip install -q -r contenders/requirements.in -c /tmp/flask-constraints.txt
{ echo "$header"; /tmp/contenders/bin/pip freeze; } > contenders/requirements.txt
echo "locked: flask_app/requirements.txt psycopg2/requirements.txt slow_api/requirements.txt" \
  "demos/requirements-legacy.txt demos/requirements-sanic.txt contenders/requirements.txt"

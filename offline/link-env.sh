#!/usr/bin/env bash
# Compose reads .env from the folder of the first -f file, not from the current one, so
#   docker compose -f story/uwsgi-threads.yml up --build --wait
# typed at the root would miss the root's .env and build FROM the official images. Every folder
# of compose files gets a relative link, FOLDER/.env -> ../.env (git-ignored, like .env), and
# then reads the same variables as the root. Deleting the root's .env leaves the links leading
# nowhere, which Compose takes as no .env at all: the official images again.
#
#   offline/link-env.sh    (run by offline/build-images.sh and by `make base-images`)
set -euo pipefail
cd "$(dirname "$0")/.."
linked=()
for dir in */; do
  dir=${dir%/}
  compgen -G "$dir/*.yml" >/dev/null || continue
  if [ -e "$dir/.env" ] && [ ! -L "$dir/.env" ]; then
    echo "link-env: $dir/.env is a file of its own; left as it is" >&2
    continue
  fi
  ln -sfn ../.env "$dir/.env"
  linked+=("$dir/")
done
echo "link-env: ${linked[*]} read the root's .env"

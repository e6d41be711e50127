#!/usr/bin/env bash
# Build local stand-ins for every registry image the scenarios start FROM, out of Debian's own
# packages, for machines that can reach Debian and PyPI but no container registry.
#
#   offline/build-images.sh          build the missing stand-ins, then write .env (and
#                                    link it into every folder of compose files)
#   FORCE=1 offline/build-images.sh  rebuild them all
#   MIRROR=URI offline/build-images.sh  build from that Debian archive (default: apt's own)
#
# Each stand-in is a Debian trixie root file system made with mmdebstrap and turned into an
# image with `docker import` (which takes no STOPSIGNAL: the compose files set stop_signal).
# Trixie ships Python 3.13, nginx and PostgreSQL 17, the same majors as the official images
# the compose files name by default. The compose files read the
# image names from variables; the .env written here points them at the stand-ins, and deleting
# .env goes back to the official images. Nothing else differs between the two paths.
#
# Certificates: the stand-ins trust what this machine trusts (its /usr/local/share/ca-certificates
# are copied in), so pip and apt inside image builds work behind a TLS-inspecting proxy too.
set -euo pipefail

cd "$(dirname "$0")/.."
SUITE=${SUITE:-trixie}
PREFIX=${PREFIX:-flask-playground-base}
FORCE=${FORCE:-0}
# The Debian archive this machine's apt uses (a local mirror included); MIRROR=... overrides it.
MIRROR=${MIRROR:-$(python3 offline/debian_mirror.py)} || {
  echo "offline-images: set MIRROR to the Debian archive to build from" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

need() { command -v "$1" >/dev/null || { echo "offline-images: '$1' is missing ($2)" >&2; exit 2; }; }
need docker "install Docker Engine"
if ! command -v mmdebstrap >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "offline-images: installing mmdebstrap from Debian's packages"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi
need mmdebstrap "apt-get install mmdebstrap"

# Copy this machine's extra CA certificates in and register them.
CA_HOOK='mkdir -p "$1/usr/local/share/ca-certificates"
for crt in /usr/local/share/ca-certificates/*.crt; do [ -e "$crt" ] && cp "$crt" "$1/usr/local/share/ca-certificates/"; done
chroot "$1" update-ca-certificates >/dev/null 2>&1 || true'

# stand_in NAME PACKAGES [mmdebstrap args...] -- [docker import --change lines...]
# Each stand-in is built in the background (its own root file system under $WORK): mmdebstrap
# waits on downloads and dpkg as much as on the CPU, so the five overlap well even on two
# cores (measured: see docs/testing.md). `wait_all` below collects them.
PIDS=()
stand_in() {
  _stand_in "$@" &
  PIDS+=("$!")
}
wait_all() {
  local failed=0 pid
  for pid in "${PIDS[@]}"; do wait "$pid" || failed=1; done
  [ "$failed" = 0 ] || { echo "offline-images: a stand-in failed to build (see above)" >&2; exit 1; }
}
_stand_in() {
  local image=$1 packages=$2; shift 2
  local mm_args=() changes=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do mm_args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  while [ $# -gt 0 ]; do changes+=(--change "$1"); shift; done
  if [ "$FORCE" != 1 ] && docker image inspect "$image" >/dev/null 2>&1; then
    echo "offline-images: $image already built (FORCE=1 rebuilds)"
    return
  fi
  local rootfs="$WORK/${image//[\/:]/_}.tar"
  echo "offline-images: building $image from Debian $SUITE packages: $packages"
  mmdebstrap --quiet --variant=minbase --include="$packages" \
    --customize-hook="$CA_HOOK" "${mm_args[@]}" "$SUITE" "$rootfs" "$MIRROR"
  # Later --change lines win, so the image's own ones (a PATH of its own, say) come last.
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL org.opencontainers.image.description=\"local stand-in built from Debian $SUITE packages\"" \
    "${changes[@]}" "$rootfs" "$image" >/dev/null
  rm -f "$rootfs"
  echo "offline-images: built $image"
}

PIP_ENV='ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt'

stand_in "$PREFIX/python:3.13-slim" \
  "python3,python3-venv,libpython3.13,ca-certificates" \
  -- "$PIP_ENV" 'CMD ["python3"]'

stand_in "$PREFIX/python:3.13" \
  "python3,python3-venv,python3-dev,libpython3.13,gcc,libc6-dev,ca-certificates" \
  -- "$PIP_ENV" 'CMD ["python3"]'

stand_in "$PREFIX/debian:trixie-slim" "ca-certificates" -- 'CMD ["bash"]'

stand_in "$PREFIX/nginx:trixie" "nginx,ca-certificates" \
  -- 'CMD ["nginx", "-g", "daemon off;"]'

# Like the official image: the entrypoint initialises PGDATA from POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB, then runs the server as the postgres user.
stand_in "$PREFIX/postgres:17" "postgresql-17,ca-certificates" \
  --customize-hook='rm -rf "$1"/var/lib/postgresql/17 "$1"/etc/postgresql/17' \
  --customize-hook='upload offline/postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh' \
  --customize-hook='chmod 0755 "$1"/usr/local/bin/docker-entrypoint.sh' \
  -- 'ENV PGDATA=/var/lib/postgresql/data' \
     'ENV PATH=/usr/lib/postgresql/17/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
     'ENTRYPOINT ["docker-entrypoint.sh"]' 'EXPOSE 5432' 'CMD ["postgres"]'

wait_all

# Compose reads .env from the project directory: point every base-image variable at a stand-in.
cat > .env <<ENV
# Written by 'make offline-images': base images built locally from Debian packages.
# Delete this file to build from the official images instead.
PYTHON_IMAGE=$PREFIX/python:3.13-slim
PYTHON_BUILD_IMAGE=$PREFIX/python:3.13
DEBIAN_IMAGE=$PREFIX/debian:trixie-slim
NGINX_IMAGE=$PREFIX/nginx:trixie
POSTGRES_IMAGE=$PREFIX/postgres:17
ENV
echo "offline-images: wrote .env (the compose files now build FROM the local stand-ins)"
# Compose reads .env from the first -f file's folder: the folders below the root link to it.
bash offline/link-env.sh

#!/bin/sh
# Entry point of the local postgres stand-in: honours the official image's variables
# (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, PGDATA) so a compose file works unchanged.
set -eu

PGDATA=${PGDATA:-/var/lib/postgresql/data}
POSTGRES_USER=${POSTGRES_USER:-postgres}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}

if [ "$(id -u)" = 0 ]; then
  # Start as root only to own the data directory (a fresh volume or tmpfs is root's), then
  # drop to the postgres user for good, as the official image does with gosu.
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?is not set: like the official image, this one needs a password}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait start >/dev/null
    psql --username="$POSTGRES_USER" --dbname=postgres --quiet \
      --command="CREATE DATABASE \"$POSTGRES_DB\""
    pg_ctl --pgdata="$PGDATA" --wait stop >/dev/null
  fi
  echo "postgres stand-in: initialised $PGDATA for user $POSTGRES_USER, database $POSTGRES_DB"
fi

if [ "${1:-}" = postgres ]; then
  shift
  exec postgres -D "$PGDATA" "$@"
fi
exec "$@"

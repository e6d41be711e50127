#!/bin/sh
# Writes nginx's configuration from the environment, then becomes nginx.
#   UPSTREAM  the dependency, host:port (required)
#   LISTEN    the port the service calls, the dependency's own (default 80)
#   ADMIN     the admin port: GET/POST /delay, GET /reach (default 9901)
set -eu
: "${UPSTREAM:?UPSTREAM=host:port of the dependency is required}"
LISTEN="${LISTEN:-80}" ADMIN="${ADMIN:-9901}"
UPSTREAM_HOST="${UPSTREAM%:*}" UPSTREAM_PORT="${UPSTREAM##*:}"
sed -e "s/@UPSTREAM@/$UPSTREAM/g" -e "s/@UPSTREAM_HOST@/$UPSTREAM_HOST/g" \
    -e "s/@UPSTREAM_PORT@/$UPSTREAM_PORT/g" -e "s/@LISTEN@/$LISTEN/g" -e "s/@ADMIN@/$ADMIN/g" \
    /etc/delayproxy/nginx.conf.template > /tmp/nginx.conf
exec nginx -e stderr -c /tmp/nginx.conf -g 'daemon off;'

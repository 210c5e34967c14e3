#!/bin/sh
# First start on an empty volume: initdb with POSTGRES_USER as the superuser and password
# authentication from the network; afterwards the existing cluster is used as it is.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" >"$pwfile"
  initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
fi
exec "$@"

#!/bin/sh
# The official postgres image's start, reduced to what compose.yaml uses: on an empty data
# directory, a cluster whose superuser is POSTGRES_USER with POSTGRES_PASSWORD (password
# authentication over TCP), and the database POSTGRES_DB; then the server in the foreground,
# listening on every address, on PGPORT (5432 unless set).
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
export PGDATA
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  chown postgres "$pwfile"
  runuser -u postgres -- initdb -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -E UTF8
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    # A server on the Unix socket alone while the database is created, as the official image does.
    runuser -u postgres -- pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start
    runuser -u postgres -- psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres \
      -c "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\""
    runuser -u postgres -- pg_ctl -D "$PGDATA" -w -m fast stop
  fi
fi
exec runuser -u postgres -- postgres -c listen_addresses='*' "$@"

#!/usr/bin/env bash
# A local PostgreSQL with logical decoding (wal_level=logical) on loopback, from Debian's packages.
#   bash scripts/postgres.sh start | stop | status | reset (also removes its data) | install
#   bash scripts/postgres.sh psql [ARGS...]   (psql into the database as the cdc user)
# Creates a login role with REPLICATION (the one Debezium uses) owning database $PG_DATABASE.
# Settings: PG_PORT (5432), PG_USER (cdc), PG_PASSWORD (cdc), PG_DATABASE (shop),
# CDC_DELTA_POSTGRES_HOME (data, logs; /tmp/cdc-delta-postgres-PORT).
set -euo pipefail
PORT=${PG_PORT:-5432}
DB_USER=${PG_USER:-cdc}
DB_PASSWORD=${PG_PASSWORD:-cdc}
DATABASE=${PG_DATABASE:-shop}
HOME_DIR=${CDC_DELTA_POSTGRES_HOME:-/tmp/cdc-delta-postgres-$PORT}
DATA=$HOME_DIR/data

bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

install() {
  [ -n "$(bin_dir)" ] && return 0
  echo "installing PostgreSQL (Debian package postgresql)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

# The server refuses to run as root: it runs as the `postgres` account the package creates.
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

running() { [ -f "$DATA/postmaster.pid" ] && as_postgres "$(bin_dir)/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

init_cluster() {
  mkdir -p "$HOME_DIR"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$HOME_DIR"
  as_postgres "$(bin_dir)/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$HOME_DIR/initdb.log" 2>&1 || { cat "$HOME_DIR/initdb.log" >&2; exit 1; }
  cat >> "$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$HOME_DIR'
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
timezone = 'UTC'
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
  echo "host replication all 127.0.0.1/32 scram-sha-256" >> "$DATA/pg_hba.conf"
}

create_role() {
  as_postgres "$(bin_dir)/psql" -h "$HOME_DIR" -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -q postgres <<SQL
SELECT 'CREATE ROLE $DB_USER' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER')\gexec
ALTER ROLE $DB_USER WITH LOGIN REPLICATION CREATEDB PASSWORD '$DB_PASSWORD';
SELECT 'CREATE DATABASE $DATABASE OWNER $DB_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DATABASE')\gexec
SQL
}

start() {
  install
  if running; then echo "postgres already running on 127.0.0.1:$PORT"; return 0; fi
  [ -f "$DATA/PG_VERSION" ] || init_cluster
  as_postgres "$(bin_dir)/pg_ctl" -D "$DATA" -l "$HOME_DIR/server.log" -w -t 60 start >/dev/null ||
    { echo "error: postgres did not start; last lines of $HOME_DIR/server.log:" >&2; tail -20 "$HOME_DIR/server.log" >&2; exit 1; }
  create_role
  echo "postgres running on 127.0.0.1:$PORT (database $DATABASE, user $DB_USER, logs $HOME_DIR/server.log)"
}

stop() {
  if running; then
    as_postgres "$(bin_dir)/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
    echo "postgres stopped"
  else
    echo "postgres not running"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "postgres running on 127.0.0.1:$PORT"; else echo "postgres not running"; exit 3; fi ;;
  reset) stop; rm -rf "$HOME_DIR"; echo "postgres state removed" ;;
  install) install ;;
  psql) shift; PGPASSWORD=$DB_PASSWORD exec psql -h 127.0.0.1 -p "$PORT" -U "$DB_USER" "$DATABASE" "$@" ;;
  *) echo "usage: $0 start|stop|status|reset|install|psql [ARGS]" >&2; exit 2 ;;
esac

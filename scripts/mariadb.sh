#!/usr/bin/env bash
# A local MariaDB with a ROW binlog (what Debezium reads) on loopback, from Debian's packages.
#   bash scripts/mariadb.sh start | stop | status | reset (also removes its data) | install
#   bash scripts/mariadb.sh sql [ARGS...]   (the mariadb client into the database as the cdc user)
# Creates user $MARIADB_USER with the privileges the Debezium connector needs and database
# $MARIADB_DATABASE. Settings: MARIADB_PORT (3306), MARIADB_USER (cdc), MARIADB_PASSWORD (cdc),
# MARIADB_DATABASE (shop), CDC_DELTA_MARIADB_HOME (data, logs; /tmp/cdc-delta-mariadb-PORT).
set -euo pipefail
source "$(dirname "$0")/process.sh"
PORT=${MARIADB_PORT:-3306}
DB_USER=${MARIADB_USER:-cdc}
DB_PASSWORD=${MARIADB_PASSWORD:-cdc}
DATABASE=${MARIADB_DATABASE:-shop}
HOME_DIR=${CDC_DELTA_MARIADB_HOME:-/tmp/cdc-delta-mariadb-$PORT}
DATA=$HOME_DIR/data
SOCKET=$HOME_DIR/mariadb.sock
PID_FILE=$HOME_DIR/mariadb.pid

install() {
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] && return 0
  echo "installing MariaDB (Debian package mariadb-server)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
}

running() { process_running "$PID_FILE"; }
as_root() { mariadb --protocol=socket -S "$SOCKET" -u root "$@"; }
healthy() { as_root -e "SELECT 1" >/dev/null 2>&1; }

configure() {
  mkdir -p "$HOME_DIR"
  cat > "$HOME_DIR/my.cnf" <<CNF
[mariadbd]
datadir = $DATA
socket = $SOCKET
pid-file = $PID_FILE
port = $PORT
bind-address = 127.0.0.1
log-error = $HOME_DIR/server.log
server-id = 1
log-bin = $HOME_DIR/binlog/mariadb-bin
binlog_format = ROW
binlog_row_image = FULL
binlog_expire_logs_seconds = 86400
default-time-zone = '+00:00'
character-set-server = utf8mb4
innodb_buffer_pool_size = 128M
innodb_flush_log_at_trx_commit = 2
skip-name-resolve
CNF
  mkdir -p "$HOME_DIR/binlog"
  [ "$(id -u)" = 0 ] && chown -R mysql:mysql "$HOME_DIR"
}

init_datadir() {
  mariadb-install-db --defaults-file="$HOME_DIR/my.cnf" --user=mysql --auth-root-authentication-method=socket \
    >"$HOME_DIR/install.log" 2>&1 || { cat "$HOME_DIR/install.log" >&2; exit 1; }
}

create_user() {
  as_root <<SQL
CREATE DATABASE IF NOT EXISTS \`$DATABASE\`;
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
GRANT SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '$DB_USER'@'127.0.0.1';
-- the sandbox user also owns the databases it creates (the end-to-end tests make one per run)
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'127.0.0.1';
SQL
}

start() {
  install
  if running && healthy; then echo "mariadb already running on 127.0.0.1:$PORT"; return 0; fi
  configure
  [ -d "$DATA/mysql" ] || init_datadir
  nohup mariadbd --defaults-file="$HOME_DIR/my.cnf" --user=mysql >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    if healthy; then
      create_user
      echo "mariadb running on 127.0.0.1:$PORT (database $DATABASE, user $DB_USER, logs $HOME_DIR/server.log)"
      return 0
    fi
    sleep 0.5
  done
  echo "error: mariadb did not answer in 60 s; last lines of $HOME_DIR/server.log:" >&2
  tail -20 "$HOME_DIR/server.log" >&2
  exit 1
}

stop() { process_stop "mariadb" "$PID_FILE"; }

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running && healthy; then echo "mariadb running on 127.0.0.1:$PORT"; else echo "mariadb not running"; exit 3; fi ;;
  reset) stop; rm -rf "$HOME_DIR"; echo "mariadb state removed" ;;
  install) install ;;
  sql) shift; MYSQL_PWD=$DB_PASSWORD exec mariadb -h 127.0.0.1 -P "$PORT" -u "$DB_USER" "$DATABASE" "$@" ;;
  *) echo "usage: $0 start|stop|status|reset|install|sql [ARGS]" >&2; exit 2 ;;
esac

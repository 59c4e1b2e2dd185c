#!/usr/bin/env bash
# The whole chain on this machine, in one command: PostgreSQL and MariaDB -> Debezium (Kafka
# Connect) -> Kafka -> cdc-delta -> Delta tables under lake/postgres and lake/mariadb.
#   bash scripts/stack.sh          start everything clean, create the sample tables, register the
#                                  connectors, run a workload, merge, print tables and a
#                                  row-by-row comparison with the sources, stop everything
#   bash scripts/stack.sh up       start the services and register the connectors, leave them up
#   bash scripts/stack.sh down     stop the services
# Settings: CHANGES (row changes per database, 400), KAFKA_PORT, CONNECT_PORT. The databases run
# on their default ports (5432, 3306), which connectors/*.json name.
set -euo pipefail
cd "$(dirname "$0")/.."
SERVICES=(kafka postgres mariadb connect)
export KAFKA_BOOTSTRAP="127.0.0.1:${KAFKA_PORT:-9092}"

down() { for ((i=${#SERVICES[@]}-1; i>=0; i--)); do bash "scripts/${SERVICES[$i]}.sh" stop; done; }

up() {
  bash scripts/setup.sh
  for s in "${SERVICES[@]}"; do bash "scripts/$s.sh" reset >/dev/null; bash "scripts/$s.sh" start; done
  python3 -m devtools.sandbox tables --engine postgres
  python3 -m devtools.sandbox tables --engine mariadb
  python3 -m devtools.sandbox register --engine postgres --engine mariadb \
    --connect "http://127.0.0.1:${CONNECT_PORT:-8083}" \
    --set "schema.history.internal.kafka.bootstrap.servers=$KAFKA_BOOTSTRAP"
}

demo() {
  trap down EXIT
  up
  rm -rf lake/postgres lake/mariadb checkpoints/postgres checkpoints/mariadb
  python3 -m devtools.sandbox workload --engine postgres --changes "${CHANGES:-400}" --truncate customers
  python3 -m devtools.sandbox workload --engine mariadb --changes "${CHANGES:-400}"
  for engine in postgres mariadb; do
    python3 -m devtools.sandbox quiet --config "configs/$engine.yaml"
    python3 -m cdc_delta run --config "configs/$engine.yaml" --show
    python3 -m devtools.sandbox compare --engine "$engine" --config "configs/$engine.yaml"
  done
}

case "${1:-demo}" in
  demo) demo ;;
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [demo|up|down]" >&2; exit 2 ;;
esac

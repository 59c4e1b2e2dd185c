#!/usr/bin/env bash
# A Spark standalone master and one worker on loopback, from the installed pyspark.
#   bash scripts/spark-cluster.sh start | stop
# Settings: SPARK_MASTER_PORT (7077), SPARK_WORKER_CORES (1), SPARK_WORKER_MEMORY (2g).
set -euo pipefail
SPARK_HOME=$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
export SPARK_HOME SPARK_LOCAL_IP=127.0.0.1
PORT=${SPARK_MASTER_PORT:-7077}
STATE=${CDC_DELTA_SPARK_HOME:-/tmp/cdc-delta-spark-$PORT}
MASTER=spark://127.0.0.1:$PORT

alive() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

launch() {  # name class args...
  local name=$1; shift
  alive "$name" && return 0
  nohup "$SPARK_HOME/bin/spark-class" "$@" >"$STATE/$name.log" 2>&1 &
  echo $! >"$STATE/$name.pid"
}

wait_for() {  # pattern file
  for _ in $(seq 1 120); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.5; done
  echo "error: spark $2 did not report '$1'; see $2" >&2; exit 1
}

start() {
  alive master || rm -rf "$STATE/work"
  mkdir -p "$STATE/work"
  launch master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$PORT" --webui-port $((PORT + 1000))
  wait_for "I have been elected leader" "$STATE/master.log"
  launch worker org.apache.spark.deploy.worker.Worker "$MASTER" --host 127.0.0.1 --webui-port $((PORT + 1001)) \
    --cores "${SPARK_WORKER_CORES:-1}" --memory "${SPARK_WORKER_MEMORY:-2g}" --work-dir "$STATE/work"
  wait_for "Successfully registered with master" "$STATE/worker.log"
  echo "spark standalone master $MASTER with one worker (logs in $STATE)"
}

stop() {
  for name in worker master; do
    if alive "$name"; then kill "$(cat "$STATE/$name.pid")" 2>/dev/null || true; fi
    rm -f "$STATE/$name.pid"
  done
  echo "spark standalone stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac

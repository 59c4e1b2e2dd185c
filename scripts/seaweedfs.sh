#!/usr/bin/env bash
# A local S3-compatible object store on loopback: SeaweedFS (`weed server -s3`), built once from
# its Go module into the cache (several minutes on 2 cores; the binary is kept).
#   bash scripts/seaweedfs.sh start | stop | status | reset (also removes its data) | build
# Idempotent like kafka.sh. Settings: S3_PORT (8333; the master, volume and filer take the next
# three ports), S3_ACCESS_KEY (cdc), S3_SECRET_KEY (cdc-secret), CDC_DELTA_S3_HOME (data, logs),
# CDC_DELTA_CACHE (~/.cache/cdc-delta). Buckets are made by their users (tests/integration/s3.py).
set -euo pipefail
source "$(dirname "$0")/process.sh"
# `go install …/weed@version` is refused (its go.mod has replace directives): download the
# module and build ./weed inside it
MODULE=github.com/seaweedfs/seaweedfs
VERSION=v0.0.0-20261109003541-7506e5f91cd6
PORT=${S3_PORT:-8333}
CACHE=${CDC_DELTA_CACHE:-$HOME/.cache/cdc-delta}
BIN=$CACHE/seaweedfs-$VERSION/weed
HOME_DIR=${CDC_DELTA_S3_HOME:-/tmp/cdc-delta-s3-$PORT}
PID_FILE=$HOME_DIR/weed.pid

build() {
  [ -x "$BIN" ] && return 0
  command -v go >/dev/null || { echo "error: Go is needed to build SeaweedFS (apt-get install golang, or go.dev/dl)" >&2; exit 4; }
  echo "building SeaweedFS $VERSION into $BIN (once; several minutes)"
  local dir
  dir=$(go mod download -json "$MODULE@$VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  mkdir -p "$(dirname "$BIN")"
  (cd "$dir" && CGO_ENABLED=0 go build -o "$BIN.tmp" ./weed)
  mv "$BIN.tmp" "$BIN"
}

running() { process_running "$PID_FILE"; }

healthy() { curl -s -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null; }

configure() {
  mkdir -p "$HOME_DIR/data"
  (umask 077; cat > "$HOME_DIR/s3.json" <<JSON
{"identities": [{"name": "cdc", "actions": ["Admin", "Read", "Write", "List", "Tagging"],
  "credentials": [{"accessKey": "${S3_ACCESS_KEY:-cdc}", "secretKey": "${S3_SECRET_KEY:-cdc-secret}"}]}]}
JSON
  )
}

start() {
  if running && healthy; then echo "seaweedfs s3 already running on 127.0.0.1:$PORT"; return 0; fi
  running && stop
  build
  configure
  nohup "$BIN" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$HOME_DIR/data" \
    -master.port=$((PORT + 1)) -volume.port=$((PORT + 2)) -filer.port=$((PORT + 3)) \
    -master.volumeSizeLimitMB=64 -volume.max=50 \
    -s3 -s3.port="$PORT" -s3.config="$HOME_DIR/s3.json" >"$HOME_DIR/weed.log" 2>&1 &
  echo $! > "$PID_FILE"
  process_await "seaweedfs s3" "$PID_FILE" "$HOME_DIR/weed.log" 60 "127.0.0.1:$PORT"
}

stop() { process_stop "seaweedfs" "$PID_FILE"; }

status() {
  if running && healthy; then echo "seaweedfs s3 running on 127.0.0.1:$PORT"; else echo "seaweedfs not running"; return 3; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  reset) stop; rm -rf "$HOME_DIR"; echo "seaweedfs state removed" ;;
  build) build ;;
  *) echo "usage: $0 start|stop|status|reset|build" >&2; exit 2 ;;
esac

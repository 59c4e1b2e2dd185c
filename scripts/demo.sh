#!/usr/bin/env bash
# The demo: starts a local Kafka broker, produces sample Debezium streams of `orders`,
# `customers` (MySQL) and `transactions` (Postgres), runs the pipeline with available-now,
# prints the tables and the batch figures, and stops the broker. Each run starts clean.
# It installs into the active virtual environment, or else into .venv in this checkout
# (created on the first run), never into the system's Python.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ]; then
  if [ ! -x .venv/bin/pip ]; then
    rm -rf .venv   # a half-made one (venv without pip)
    if ! python3 -m venv .venv 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
      echo "installing python3-venv (Debian package)"
      rm -rf .venv
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv .venv || true
    fi
    [ -x .venv/bin/pip ] || {
      echo "error: python3 can not create a virtual environment; install python3-venv (or your system's venv module), then run this again" >&2
      exit 4
    }
  fi
  export VIRTUAL_ENV=$PWD/.venv PATH=$PWD/.venv/bin:$PATH
fi
bash scripts/setup.sh demo
export KAFKA_PORT=${KAFKA_PORT:-9092}
bash scripts/kafka.sh reset >/dev/null
trap 'bash scripts/kafka.sh stop >/dev/null' EXIT
bash scripts/kafka.sh start
rm -rf lake/demo checkpoints/demo
python3 -m devtools.demo produce --bootstrap "127.0.0.1:$KAFKA_PORT"
KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT" python3 -m cdc_delta run --config configs/demo.yaml --show
KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT" python3 -m cdc_delta status --config configs/demo.yaml
python3 -m devtools.demo routes --bootstrap "127.0.0.1:$KAFKA_PORT"

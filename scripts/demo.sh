#!/usr/bin/env bash
# The demo: starts a local Kafka broker, produces sample Debezium streams of `orders`,
# `customers` (MySQL) and `transactions` (Postgres), runs the pipeline with available-now,
# prints the tables and the batch figures, and stops the broker. Each run starts clean.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
export KAFKA_PORT=${KAFKA_PORT:-9092}
bash scripts/kafka.sh reset >/dev/null
trap 'bash scripts/kafka.sh stop >/dev/null' EXIT
bash scripts/kafka.sh start
rm -rf lake/demo checkpoints/demo
python3 -m devtools.demo produce --bootstrap "127.0.0.1:$KAFKA_PORT"
KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT" python3 -m cdc_delta run --config configs/demo.yaml --show
KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT" python3 -m cdc_delta status --config configs/demo.yaml

#!/usr/bin/env bash
# The demo: archived Debezium events of `orders` (a snapshot, inserts, updates, deletes, a
# re-insert, a Kafka tombstone, a malformed event, a late redelivery) merged into a Delta table.
# Each run starts from an empty demo lake so it shows the same thing every time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -rf lake/orders-demo checkpoints/orders-demo
python3 -m cdc_delta run --config configs/orders-demo.yaml --show

#!/usr/bin/env bash
# The JVM class archive every local cdc-delta session maps (cdc_delta/infra/class_archive.py),
# made once per Java and pyspark install (cdc_delta/ops/make_class_archive.py) by a run of sample
# events through a broker of its own on loopback (KAFKA_PORT 18992, tests/ports.py). Safe to run
# again: it does nothing when made.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m cdc_delta.ops.make_class_archive --made && exit 0
export KAFKA_PORT=18992 KAFKA_CONTROLLER_PORT=18993 CDC_DELTA_KAFKA_HOME=/tmp/cdc-delta-kafka-class-archive
bash scripts/kafka.sh reset >/dev/null
trap 'bash scripts/kafka.sh stop >/dev/null; bash scripts/kafka.sh reset >/dev/null' EXIT
bash scripts/kafka.sh start >/dev/null
echo "making the JVM class archive (once per Java and pyspark install, about a minute)"
python3 -m cdc_delta.ops.make_class_archive --bootstrap "127.0.0.1:$KAFKA_PORT"

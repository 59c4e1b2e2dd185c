#!/usr/bin/env bash
# Runs a cdc-delta command on a Spark cluster with spark-submit and the packaged cdc_delta.
#   bash scripts/submit.sh spark://HOST:7077 run --config configs/demo.yaml
# The Delta and Kafka jars go with --jars; cdc_delta goes as a zip with --py-files.
set -euo pipefail
cd "$(dirname "$0")/.."
MASTER=$1; shift
SPARK_HOME=$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
JARS=$(python3 -c 'from cdc_delta.infra.jars import spark_jars; print(",".join(spark_jars()))')
mkdir -p dist
rm -f dist/cdc_delta.zip
python3 - <<'PY'
import pathlib, zipfile
with zipfile.ZipFile("dist/cdc_delta.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for p in pathlib.Path("cdc_delta").rglob("*"):
        if p.is_file() and "__pycache__" not in p.parts:
            z.write(p)
PY
exec "$SPARK_HOME/bin/spark-submit" --master "$MASTER" --deploy-mode client \
  --jars "$JARS" --py-files dist/cdc_delta.zip \
  --conf spark.executor.memory=1g --conf spark.sql.shuffle.partitions=2 \
  --conf "spark.driver.extraJavaOptions=-Dlog4j.configurationFile=$PWD/cdc_delta/log4j2.properties -XX:+UseParallelGC" \
  scripts/submit_main.py "$@"

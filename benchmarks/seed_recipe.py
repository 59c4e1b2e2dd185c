"""Baseline 1: the seed document's recipe, as written. readStream from Kafka, from_json with
the envelope schema, foreachBatch that keeps the row with the greatest ts_ms per key (a window)
and runs one three-clause MERGE. No ordering guard, no tombstones, no TOAST handling, no
quarantine; logical types kept as Debezium encodes them.

    python -m benchmarks.seed_recipe BOOTSTRAP TOPIC TABLE_PATH CHECKPOINT MAX_OFFSETS WRAPPED TIMES_JSONL
"""

from __future__ import annotations

import json
import sys
import time

from delta.tables import DeltaTable
from pyspark.sql import Window
from pyspark.sql import functions as F

from cdc_delta.infra.session import get_spark

from .tables import PLAIN_TYPES

ROW = ", ".join(f"{c}: {t}" for c, t in PLAIN_TYPES.items())
ENVELOPE = f"before struct<{ROW}>, after struct<{ROW}>, op string, ts_ms bigint"


def main(bootstrap: str, topic: str, table: str, checkpoint: str, max_offsets: int, wrapped: bool,
         times: str) -> None:
    spark = get_spark("seed-recipe")
    schema = f"payload struct<{ENVELOPE}>" if wrapped else ENVELOPE
    events = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", max_offsets).load()
              .select(F.from_json(F.col("value").cast("string"), schema).alias("e")))
    events = events.select("e.payload.*" if wrapped else "e.*").filter(F.col("op").isNotNull())

    def upsert(batch, batch_id):
        started = time.monotonic()
        keyed = batch.withColumn("key", F.coalesce(F.col("after.id"), F.col("before.id")))
        latest = (keyed.withColumn("rn", F.row_number().over(Window.partitionBy("key").orderBy(F.desc("ts_ms"))))
                  .filter("rn = 1"))
        (DeltaTable.forPath(spark, table).alias("t").merge(latest.alias("s"), "t.id = s.key")
         .whenMatchedDelete("s.op = 'd'")
         .whenMatchedUpdate("s.op <> 'd'", {c: f"s.after.{c}" for c in PLAIN_TYPES})
         .whenNotMatchedInsert("s.op <> 'd'", {c: f"s.after.{c}" for c in PLAIN_TYPES}).execute())
        with open(times, "a") as fh:
            fh.write(json.dumps({"batch_id": batch_id, "seconds": time.monotonic() - started,
                                 "finished_at": time.time()}) + "\n")

    (events.writeStream.foreachBatch(upsert).option("checkpointLocation", checkpoint)
     .trigger(availableNow=True).start().awaitTermination())
    spark.stop()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]), a[5] == "1", a[6])

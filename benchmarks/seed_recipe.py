"""Baseline 1: the seed document's recipe, as written. readStream from Kafka, from_json with
the envelope schema, foreachBatch that keeps the row with the greatest ts_ms per key (a window)
and runs one three-clause MERGE. No ordering guard, no tombstones, no TOAST handling, no
quarantine; logical types kept as Debezium encodes them.

    python -m benchmarks.seed_recipe BOOTSTRAP TOPIC TABLE_PATH CHECKPOINT MAX_OFFSETS WRAPPED TIMES_JSONL \
        [TRIGGER PROGRESS_JSONL]

Available-now by default; with TRIGGER ("5 seconds") a service on a processing-time trigger
until SIGTERM, each batch's records and end offsets written to PROGRESS_JSONL from the query's
progress (benchmarks/freshness.py).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time

from delta.tables import DeltaTable
from pyspark.sql import Window
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQueryListener

from cdc_delta.infra.session import get_spark

from .tables import PLAIN_TYPES

ROW = ", ".join(f"{c}: {t}" for c, t in PLAIN_TYPES.items())
ENVELOPE = f"before struct<{ROW}>, after struct<{ROW}>, op string, ts_ms bigint"


def main(bootstrap: str, topic: str, table: str, checkpoint: str, max_offsets: int, wrapped: bool,
         times: str, trigger: str | None = None, progress: str | None = None) -> None:
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

    writer = events.writeStream.foreachBatch(upsert).option("checkpointLocation", checkpoint)
    if trigger is None:
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        spark.streams.addListener(ProgressLines(progress))
        query = writer.trigger(processingTime=trigger).start()
        stopping = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopping.set())
        while not stopping.is_set() and query.isActive:
            query.awaitTermination(1)
        query.stop()
    spark.stop()


class ProgressLines(StreamingQueryListener):
    """Each batch's records and last offset per topic/partition, as cdc-delta's metrics give them."""

    def __init__(self, path: str) -> None:
        self.path = path

    def onQueryStarted(self, event) -> None:
        pass

    def onQueryProgress(self, event) -> None:
        p = event.progress
        ends = json.loads(p.sources[0].endOffset) if p.sources and p.sources[0].endOffset else {}
        offsets = {f"{t}/{part}": end - 1 for t, parts in ends.items() for part, end in parts.items()}
        with open(self.path, "a") as fh:
            fh.write(json.dumps({"batch_id": p.batchId, "records_in": p.numInputRows, "offsets": offsets}) + "\n")

    def onQueryIdle(self, event) -> None:
        pass

    def onQueryTerminated(self, event) -> None:
        pass


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]), a[5] == "1", a[6], *a[7:9])

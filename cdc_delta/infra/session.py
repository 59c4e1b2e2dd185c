"""The SparkSession cdc-delta builds when it is given none: Delta and Kafka jars, UTC, and
local defaults for its own local session only."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from pyspark import SparkConf
from pyspark.sql import SparkSession

from .class_archive import java_options
from .jars import spark_jars

# throughput over pause times: batches ran ~9% faster than with the default G1 (benchmarks)
JVM_GC = "-XX:+UseParallelGC"
LOG4J = Path(__file__).parents[1] / "log4j2.properties"   # package data: cdc_delta/log4j2.properties
# what cdc-delta needs of a session it creates (under spark-submit too, where not given)
REQUIRED = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stopGracefullyOnShutdown": "true",
}
# tuning for its own local[2] session only: a cluster's are the cluster's
LOCAL_DEFAULTS = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.driver.memory": "2g",
    # Spark keeps 100 compiled classes by default; one batch's plans (decode, reduce, guard,
    # Delta's MERGE and log queries) need ~160, so each batch recompiled them all (~2 s).
    "spark.sql.codegen.cache.maxEntries": "1000",
    # a batch caches its decoded records and changes, reads them a few times and drops them:
    # compressing the cached columns cost more CPU than it saved (~8% of a warm batch, benchmarks)
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    # a MERGE joins its few changes to every row of the files it rewrites: when the changes'
    # side of each partition is this small, a hash join on it in place of sorting those rows
    # (garbage collection per 1k-event batch into 1M rows 0.9 s -> 0.55 s, benchmarks/ab.py)
    "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "64m",
    # the same hash join where a batch runs without adaptive execution (batch/codegen.py: its
    # tables under 128 MB): the planner then picks it from the sizes it knows, when one side is
    # under 20 MB (10 MB per shuffle partition) and a third of the other, as the changes are
    # (1k-event batches into 1M rows 0.97x the seconds, garbage collection 0.47 -> 0.32 s; README)
    "spark.sql.join.preferSortMergeJoin": "false",
    # a batch's decode compiles to methods over HotSpot's 8,000-byte limit, which the JIT never
    # compiles: past this size Spark generates code per operator instead, in smaller methods
    # (Spark's own advice on HotSpot; 100k-event snapshot batches 7.88 s -> 6.89 s, benchmarks/ab.py)
    "spark.sql.codegen.hugeMethodLimit": "8000",
    # Spark sizes its memory pages from the heap (64 MB with this one), and every hash
    # aggregate and broadcast hash join takes at least one page however few its rows: a batch's
    # small aggregates and broadcasts filled the heap with 64 MB arrays, and a broadcast's stays
    # until Spark cleans it up (10k-event batches into 100k rows: their tasks' garbage
    # collection 1.4 -> 0.3 s, 0.80x the seconds per batch, benchmarks/ab.py; README)
    "spark.buffer.pageSize": "2m",
    # `timestamp` columns written as Parquet's INT64 microseconds, not Spark's default INT96,
    # which Parquet deprecated (Delta Kernel and delta-rs write INT64; DataFusion reads INT96 as
    # nanoseconds). Exact either way; fewer bytes to encode (100k-event snapshot batches 0.97x
    # the seconds, benchmarks/ab.py; README)
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # a MERGE first copies its source (the batch's reduced changes) and reads the copy in each of
    # its passes; Delta keeps it on disk alone by default, so each pass reads it back and
    # deserializes it. In memory first, on disk when memory runs short (Delta requires disk):
    # 0.91x the seconds per 10k-event batch into 100k rows, 0.95x at 100k-event batches
    # (python -m benchmarks.alternate: neighbouring batches without and with it; README)
    "spark.databricks.delta.merge.materializeSource.rddStorageLevel": "MEMORY_AND_DISK",
    # batches of fewer records run Spark's expressions interpreted, not compiled (batch/codegen.py)
    "spark.cdcdelta.interpretBelowRecords": "1000",
}


def get_spark(app_name: str = "cdc-delta", extra: dict[str, str] | None = None,
              schemes: tuple[str, ...] = ()) -> SparkSession:
    """A session with Delta, the Kafka source and the file systems of `schemes` (`s3a`).

    On Databricks the runtime's session is returned as it is. Under spark-submit the master,
    the jars and every setting given on the command line win, and only what cdc-delta needs
    (REQUIRED) fills what is missing; its own local session also gets LOCAL_DEFAULTS."""
    if os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        return SparkSession.builder.getOrCreate()
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started this driver
    builder = SparkSession.builder.appName(app_name)
    if not submitted:
        builder = builder.master(os.environ.get("CDC_DELTA_MASTER", "local[2]"))
        builder = builder.config("spark.jars", ",".join(spark_jars(schemes)))
        # the class archive setup made (class_archive.py), when it made one for this Java and jars
        builder = builder.config("spark.driver.extraJavaOptions",
                                 f"-Dlog4j.configurationFile={LOG4J} {JVM_GC} {java_options(JVM_GC)}".strip())
    given = SparkConf() if submitted else None
    defaults = REQUIRED if submitted else {**REQUIRED, **LOCAL_DEFAULTS}
    for key, value in defaults.items():
        if given is not None and given.contains(key):
            continue
        builder = builder.config(key, value)
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("CDC_DELTA_SPARK_LOG", "ERROR"))
    return spark

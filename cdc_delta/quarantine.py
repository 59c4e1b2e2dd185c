"""The dead-letter table: every event that can not be applied, with why and where from.

One row per event: raw bytes, topic/partition/offset or file/line, table, reason, batch id.
Appends are idempotent per batch (txnAppId/txnVersion). ``replay`` feeds quarantined events
back through the batch handler once their cause is fixed and marks those that now apply.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .lake.apply import append_once
from .lake.tables import DeltaLocation, create_if_missing

QUARANTINE_DDL = (
    "`value` binary, `topic` string, `partition` int, `offset` bigint, `origin` string, "
    "`kafka_ts` timestamp, `table` string, `reason` string, `pipeline` string, "
    "`batch_id` bigint, `quarantined_at` timestamp, `replayed_batch` bigint"
)
ORIGIN_KEY = ("origin", "topic", "partition", "offset")


def ensure_quarantine(spark: SparkSession, where: DeltaLocation) -> None:
    create_if_missing(spark, where, QUARANTINE_DDL)


def quarantine_rows(bad: DataFrame, pipeline: str, batch_id: int) -> DataFrame:
    """Shape bad records (``_cdc_*`` origin columns, table, error) as quarantine rows."""
    return bad.select(
        F.col("_cdc_value").alias("value"), F.col("_cdc_topic").alias("topic"),
        F.col("_cdc_partition").cast("int").alias("partition"),
        F.col("_cdc_offset").cast("bigint").alias("offset"), F.col("_cdc_origin").alias("origin"),
        F.col("_cdc_kafka_ts").alias("kafka_ts"), F.col("_cdc_table").alias("table"),
        F.col("_cdc_error").alias("reason"), F.lit(pipeline).alias("pipeline"),
        F.lit(batch_id).cast("bigint").alias("batch_id"),
        F.current_timestamp().alias("quarantined_at"), F.lit(None).cast("bigint").alias("replayed_batch"),
    )


def write_quarantine(rows: DataFrame, where: DeltaLocation, app_id: str, batch_id: int) -> None:
    """Append once per batch, and never a second row for an event already quarantined by this
    pipeline (a batch read again after a lost checkpoint runs under another app id)."""
    existing = where.read(rows.sparkSession).select(*ORIGIN_KEY, "pipeline").alias("q")
    same = [F.col(f"r.{c}").eqNullSafe(F.col(f"q.{c}")) for c in (*ORIGIN_KEY, "pipeline")]
    cond = same[0]
    for c in same[1:]:
        cond = cond & c
    append_once(rows.alias("r").join(existing, cond, "left_anti"), where, f"{app_id}:quarantine", batch_id)


def pending(spark: SparkSession, where: DeltaLocation, pipeline: str, table: str | None) -> DataFrame:
    """Quarantined events of a pipeline that were not yet replayed successfully."""
    rows = where.read(spark).filter((F.col("pipeline") == pipeline) & F.col("replayed_batch").isNull())
    return rows.filter(F.col("table") == table) if table else rows


def as_raw_records(rows: DataFrame) -> DataFrame:
    """Quarantine rows back into the source contract (value, topic, partition, offset, …)."""
    return rows.select("value", "topic", "partition", "offset", "origin", "kafka_ts").distinct()


def mark_replayed(spark: SparkSession, where: DeltaLocation, replayed: DataFrame,
                  still_bad: DataFrame, replay_id: int) -> None:
    """Mark pending rows whose event applied this time (those not quarantined again)."""
    done = replayed.join(still_bad.select(*ORIGIN_KEY).distinct(), list(ORIGIN_KEY), "left_anti")
    cond = " AND ".join(f"t.`{c}` <=> s.`{c}`" for c in ORIGIN_KEY) + " AND t.replayed_batch IS NULL"
    (where.table(spark).alias("t").merge(done.select(*ORIGIN_KEY).distinct().alias("s"), cond)
     .whenMatchedUpdate(set={"replayed_batch": F.lit(replay_id)}).execute())

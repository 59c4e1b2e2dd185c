"""The dead-letter table: every event that can not be applied, with why and where from.

One row per event: raw bytes, topic/partition/offset or file/line, table, reason, batch id.
Appends are idempotent per batch (lake/writes.py: append_once). ``replay`` feeds quarantined events
back through the batch handler once their cause is fixed and marks those that now apply.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..report import BatchContext
from ..frame import (ERROR, KAFKA_TS, OFFSET, ORIGIN, ORIGIN_COLUMNS, PARTITION, RAW_COLUMNS, TABLE, TOPIC, VALUE,
                     VALUE_HASH)
from ..infra.conditions import same_values
from ..lake.tables import DeltaLocation, create_if_missing
from ..lake.writes import append_once

QUARANTINE_DDL = (
    "`value` binary, `topic` string, `partition` int, `offset` bigint, `origin` string, "
    "`kafka_ts` timestamp, `table` string, `reason` string, `pipeline` string, "
    "`batch_id` bigint, `quarantined_at` timestamp, `replayed_batch` bigint"
)
ORIGIN_KEY = ("origin", "topic", "partition", "offset")


class Quarantine:
    """The quarantine as a sink: its rows are the batch's bad records (see `rows_of`)."""

    def __init__(self, spark: SparkSession, where: DeltaLocation, locked: bool = False) -> None:
        self.spark, self.where, self.locked = spark, where, locked

    def locations(self) -> list[DeltaLocation]:
        return [self.where]

    def prepare(self) -> None:
        create_if_missing(self.spark, self.where, QUARANTINE_DDL)

    def close(self) -> None:
        pass

    def write(self, batch: BatchContext, rows: DataFrame) -> int:
        """Append once per batch, and never a second row for an event already quarantined by
        this pipeline (a batch read again after a lost checkpoint runs under another app id).
        Returns the batch's quarantined records (counted by the batch's facts)."""
        if not (self.locked and self.where.as_created()):   # held and as created: nothing to read
            existing = self.where.read(rows.sparkSession).select(*ORIGIN_KEY, "pipeline").alias("q")
            rows = rows.alias("r").join(existing, same_values((*ORIGIN_KEY, "pipeline"), "r", "q"), "left_anti")
        append_once(rows, self.where, batch.append_id("quarantine"), batch.batch_id, self.locked)
        return batch.report.quarantined


def rows_of(routed: DataFrame, changes: dict[str, DataFrame], pipeline: str, batch_id: int,
            raw: DataFrame | None) -> DataFrame:
    """The quarantine rows of a batch: records bad as envelopes (routed to no table) and each
    table's bad changes, whose raw values are read again from the batch's records `raw` (None
    when no change is bad): the decode keeps them only where something else reads them."""
    envelope_bad = routed.filter(F.col(TABLE).isNull() & F.col(ERROR).isNotNull())
    out = _shaped(envelope_bad, pipeline, batch_id)
    if raw is None:
        return out
    kept = [c for c in (*ORIGIN_COLUMNS, VALUE_HASH, ERROR) if c != VALUE]
    bad = [df.filter(F.col(ERROR).isNotNull()).select(*kept, F.lit(name).alias(TABLE)) for name, df in changes.items()]
    return out.unionByName(_shaped(_with_values(reduce(DataFrame.unionByName, bad), raw), pipeline, batch_id))


def _with_values(bad: DataFrame, raw: DataFrame) -> DataFrame:
    """`bad` changes with their raw values, found in `raw` by origin and the value's hash: the
    few records that `bad` names are picked out of `raw` first (a broadcast of `bad`'s keys), so
    the join of the two is small. A change whose record is not found keeps a NULL value."""
    key = (TOPIC, PARTITION, OFFSET, ORIGIN, VALUE_HASH)
    records = raw.select(*[F.col(c).alias(o) for c, o in zip(RAW_COLUMNS, ORIGIN_COLUMNS)],
                         F.xxhash64("value").alias(VALUE_HASH))
    named = records.alias("r").join(F.broadcast(bad.select(*key).alias("b")), same_values(key, "r", "b"), "left_semi")
    found = named.select(*key, VALUE).dropDuplicates(list(key)).alias("f")
    return bad.alias("c").join(found, same_values(key, "c", "f"), "left").select("c.*", F.col(f"f.{VALUE}"))


def _shaped(bad: DataFrame, pipeline: str, batch_id: int) -> DataFrame:
    """Bad records (origin columns, table, error) as quarantine rows."""
    return bad.select(
        F.col(VALUE).alias("value"), F.col(TOPIC).alias("topic"),
        F.col(PARTITION).cast("int").alias("partition"),
        F.col(OFFSET).cast("bigint").alias("offset"), F.col(ORIGIN).alias("origin"),
        F.col(KAFKA_TS).alias("kafka_ts"), F.col(TABLE).alias("table"),
        F.col(ERROR).alias("reason"), F.lit(pipeline).alias("pipeline"),
        F.lit(batch_id).cast("bigint").alias("batch_id"),
        F.current_timestamp().alias("quarantined_at"), F.lit(None).cast("bigint").alias("replayed_batch"),
    )


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

"""The tables beside a current-state table: tombstones of its deletes (the guard's memory of
keys deleted out of order), its truncates, and its unresolved TOAST counts."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ...frame import OP, SEQ_COLUMN, SEQ_TYPE, TS_COLUMN
from ...infra.names import col, quote
from ...lake.tables import DeltaLocation, create_if_missing
from ...lake.writes import append_once
from ...steps.position import seq_literal


def ensure_companions(spark: SparkSession, target: DeltaLocation, key_ddl: str, keys: list[str]) -> None:
    """The tombstone and truncate tables that live beside a target."""
    meta = f"{quote(SEQ_COLUMN)} {SEQ_TYPE}, {quote(TS_COLUMN)} bigint"
    create_if_missing(spark, target.child("tombstones"), f"{key_ddl}, {meta}", column_names=keys)
    create_if_missing(spark, target.child("truncates"), f"{meta}, `batch_id` bigint")


def apply_truncate(spark: SparkSession, target: DeltaLocation, truncate_seq: Row,
                   source_ts: int | None, batch_id: int, app_id: str, locked: bool) -> int:
    """Remove every row older than the truncate and remember its position for the guard."""
    boundary = seq_literal(truncate_seq)
    count = target.read(spark).filter(F.col(SEQ_COLUMN) < boundary).count()
    if count:
        target.table(spark).delete(F.col(SEQ_COLUMN) < boundary)
    marker = one_row(spark, boundary.alias(SEQ_COLUMN), F.lit(source_ts).cast("bigint").alias(TS_COLUMN),
                     F.lit(batch_id).cast("bigint").alias("batch_id"))
    append_once(marker, target.child("truncates"), app_id, batch_id, locked)
    return count


def append_tombstones(target: DeltaLocation, changes: DataFrame, keys: list[str], app_id: str,
                      batch_id: int, locked: bool) -> None:
    """Tombstones are appended (idempotent per batch), not merged: the guard asks whether any
    tombstone of the key is after the change, so older tombstones need no rewrite."""
    append_once(tombstones_of(changes, keys), target.child("tombstones"), f"{app_id}:tombstones", batch_id, locked)


def tombstones_of(changes: DataFrame, keys: list[str]) -> DataFrame:
    """The tombstones of a batch's reduced changes: key and position of each delete."""
    return changes.filter(F.col(OP) == "d").select(*[col(k) for k in keys], SEQ_COLUMN, TS_COLUMN)


def collect_tombstones(spark: SparkSession, target: DeltaLocation, newest_source_ts: int,
                       retention_ms: int) -> int:
    """Forget tombstones older than the retention, measured in source time."""
    cutoff = newest_source_ts - retention_ms
    tomb = target.child("tombstones")
    old = F.col(TS_COLUMN) < F.lit(cutoff)
    count = tomb.read(spark).filter(old).count()
    if count:
        tomb.table(spark).delete(old)
    return count


def one_row(spark: SparkSession, *columns: Column) -> DataFrame:
    """A frame of the driver's values, as literals over one row: read in the JVM alone. A frame
    built from Python rows is a Python RDD, and writing it starts Python workers (their daemon
    takes about a second to start in a run's first such write)."""
    return spark.range(1).select(*columns)


def record_unresolved(spark: SparkSession, target: DeltaLocation, counts: dict[str, int], batch_id: int,
                      app_id: str, locked: bool) -> None:
    """Keep a batch's unresolved TOAST counts beside the table (created when first needed), for
    `status`; idempotent per batch like every append."""
    if counts:
        rows = one_row(spark, F.inline(F.array(*[
            F.struct(F.lit(batch_id).cast("bigint").alias("batch_id"), F.lit(c).alias("column"),
                     F.lit(n).cast("bigint").alias("values")) for c, n in counts.items()])))
        append_once(rows, target.child("toast_unresolved"), f"{app_id}:toast", batch_id, locked)

"""Apply one table's reduced changes: truncate barrier, MERGE, tombstones."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Iterator

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ..frame import SEQ_TYPE, toast_column
from ..names import col
from .guard import seq_literal
from .plan import MergePlan, merge_plan, unresolved_after_merge
from .tables import SEQ_COLUMN, TS_COLUMN, DeltaLocation, create_if_missing, quote

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


def ensure_companions(spark: SparkSession, target: DeltaLocation, key_ddl: str, keys: list[str]) -> None:
    """The tombstone and truncate tables that live beside a target."""
    meta = f"{quote(SEQ_COLUMN)} {SEQ_TYPE}, {quote(TS_COLUMN)} bigint"
    create_if_missing(spark, target.child("tombstones"), f"{key_ddl}, {meta}", column_names=keys)
    create_if_missing(spark, target.child("truncates"), f"{meta}, `batch_id` bigint")


@contextmanager
def commit_metadata(sessions: list[SparkSession], metadata: dict[str, Any]) -> Iterator[None]:
    """Every Delta commit inside records the batch id and source offsets it came from.

    foreachBatch hands over DataFrames of a cloned session, so the setting goes on every
    session a write may run in."""
    text = json.dumps(metadata, sort_keys=True)
    for s in sessions:
        s.conf.set(USER_METADATA, text)
    try:
        yield
    finally:
        for s in sessions:
            s.conf.unset(USER_METADATA)


def apply_truncate(spark: SparkSession, target: DeltaLocation, truncate_seq: Row,
                   source_ts: int | None, batch_id: int, app_id: str) -> int:
    """Remove every row older than the truncate and remember its position for the guard."""
    boundary = seq_literal(truncate_seq)
    count = target.read(spark).filter(F.col(SEQ_COLUMN) < boundary).count()
    if count:
        target.table(spark).delete(F.col(SEQ_COLUMN) < boundary)
    marker = spark.createDataFrame([(truncate_seq, source_ts, batch_id)],
                                   f"{SEQ_COLUMN} {SEQ_TYPE}, {TS_COLUMN} bigint, batch_id bigint")
    append_once(marker, target.child("truncates"), app_id, batch_id)
    return count


def merge_changes(spark: SparkSession, target: DeltaLocation, changes: DataFrame,
                  keys: list[str], values: list[str], has_deletes: bool, batch_id: int,
                  app_id: str) -> tuple[int, int, int]:
    """One MERGE into the target and, side by side with it, the tombstones of its deletes (when
    there are any): two commits to two tables overlap, and either order of landing is safe.

    Tombstones are appended (idempotent per batch), not merged: the guard asks whether any
    tombstone of the key is after the change, so older tombstones need no rewrite."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        tombstones = pool.submit(_append_tombstones, target, changes, keys, app_id, batch_id) if has_deletes else None
        metrics = _run_merge(target, changes, merge_plan(keys, values))
        if tombstones is not None:
            tombstones.result()
    return (metrics.get("num_inserted_rows", 0), metrics.get("num_updated_rows", 0),
            metrics.get("num_deleted_rows", 0))


def _append_tombstones(target: DeltaLocation, changes: DataFrame, keys: list[str], app_id: str,
                       batch_id: int) -> None:
    deletes = changes.filter(F.col("_cdc_op") == "d").select(*[col(k) for k in keys], SEQ_COLUMN, TS_COLUMN)
    append_once(deletes, target.child("tombstones"), f"{app_id}:tombstones", batch_id)


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


def count_unresolved(spark: SparkSession, target: DeltaLocation, changes: DataFrame, keys: list[str],
                     values: list[str]) -> dict[str, int]:
    """Per column, the NULLs the MERGE of `changes` is about to write for TOAST placeholders
    with no earlier value known (no change of the batch had one and the key has no stored row,
    or a delete came between). One job, run before the MERGE against the stored keys; only
    for batches with placeholders the batch itself could not answer."""
    waiting = [col(toast_column(c)).isNotNull() & ~col(toast_column(c)).getField("known") for c in values]
    if not waiting:
        return {}
    candidates = changes.filter(_any(waiting))
    stored = target.read(spark).select(*[col(k) for k in keys], SEQ_COLUMN)
    on = [F.col(f"s.{quote(k)}") == F.col(f"t.{quote(k)}") for k in keys]
    joined = candidates.alias("s").join(stored.alias("t"), _all(on), "left")
    sums = joined.agg(*[F.sum(F.expr(unresolved_after_merge(c)).cast("int")).alias(f"n{i}")
                        for i, c in enumerate(values)]).first()
    return {c: int(sums[f"n{i}"]) for i, c in enumerate(values) if sums[f"n{i}"]}


def record_unresolved(spark: SparkSession, target: DeltaLocation, counts: dict[str, int], batch_id: int,
                      app_id: str) -> None:
    """Keep a batch's unresolved TOAST counts beside the table (created when first needed), for
    `status`; idempotent per batch like every append."""
    if counts:
        rows = spark.createDataFrame([(batch_id, c, n) for c, n in counts.items()],
                                     "batch_id bigint, `column` string, `values` bigint")
        append_once(rows, target.child("toast_unresolved"), f"{app_id}:toast", batch_id)


def _any(conditions: list[Column]) -> Column:
    out = conditions[0]
    for c in conditions[1:]:
        out = out | c
    return out


def _all(conditions: list[Column]) -> Column:
    out = conditions[0]
    for c in conditions[1:]:
        out = out & c
    return out


def _run_merge(target: DeltaLocation, source: DataFrame, plan: MergePlan) -> dict[str, int]:
    builder = target.table(source.sparkSession).alias("t").merge(source.alias("s"), plan.on)
    if plan.delete_when != "false":
        builder = builder.whenMatchedDelete(condition=plan.delete_when)
    builder = builder.whenMatchedUpdate(condition=plan.update_when, set=plan.update_set)
    builder = builder.whenNotMatchedInsert(condition=plan.insert_when, values=plan.insert_values)
    result = builder.execute()
    if result is None:
        return {}
    row = result.first()
    return {k: int(v or 0) for k, v in row.asDict().items()} if row else {}


def append_once(df: DataFrame, where: DeltaLocation, app_id: str, batch_id: int) -> None:
    """An append that a replayed batch does not repeat (Delta's txnAppId/txnVersion)."""
    writer = df.write.format("delta").mode("append").option("txnAppId", app_id).option("txnVersion", batch_id)
    if where.path:
        writer.save(where.path)
    else:
        writer.saveAsTable(where.name)


"""The MERGE of one table's reduced changes (or, when none can match a stored row, their
append), and what it is about to leave unresolved."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ...frame import OP, SEQ_COLUMN, TS_COLUMN, toast_column
from ...infra.conditions import all_of, any_of
from ...infra.names import col, quote
from ...lake.tables import DeltaLocation
from ...lake.writes import append_once, rows_appended
from .companions import append_tombstones
from .plan import MergePlan, merge_plan, unresolved_after_merge


def merge_changes(target: DeltaLocation, changes: DataFrame, keys: list[str], values: list[str],
                  has_deletes: bool, batch_id: int, app_id: str,
                  key_range: tuple[int, int] | None = None, locked: bool = False,
                  toasted: list[str] | None = None, new_keys_only: bool = False,
                  session: SparkSession | None = None) -> tuple[int, int, int]:
    """One MERGE into the target and, side by side with it, the tombstones of its deletes (when
    there are any): two commits to two tables overlap, and either order of landing is safe.
    `locked`: the run holds the writer lock (see lake/writes.py: append_once); `toasted`: the
    columns that may hold a placeholder (see plan.merge_plan); `new_keys_only`: no change can
    match a stored row (see key_span.py), so the MERGE would only insert, and an append does
    that with no join against the table; `session`: the one the MERGE runs in (by default the
    changes' own; see lake/deletion_vectors.py). Returns the rows inserted, updated and deleted."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        tombstones = (pool.submit(append_tombstones, target, changes, keys, app_id, batch_id, locked)
                      if has_deletes else None)
        if new_keys_only:
            metrics = {"num_inserted_rows": _append_inserts(target, changes, keys, values, app_id, batch_id, locked)}
        else:
            metrics = _run_merge(target, changes, merge_plan(keys, values, key_range, toasted), session)
        if tombstones is not None:
            tombstones.result()
    return (metrics.get("num_inserted_rows", 0), metrics.get("num_updated_rows", 0),
            metrics.get("num_deleted_rows", 0))


def _run_merge(target: DeltaLocation, source: DataFrame, plan: MergePlan,
               session: SparkSession | None = None) -> dict[str, int]:
    builder = target.table(session or source.sparkSession).alias("t").merge(source.alias("s"), plan.on)
    if plan.delete_when != "false":
        builder = builder.whenMatchedDelete(condition=plan.delete_when)
    builder = builder.whenMatchedUpdate(condition=plan.update_when, set=plan.update_set)
    builder = builder.whenNotMatchedInsert(condition=plan.insert_when, values=plan.insert_values)
    result = builder.execute()
    if result is None:
        return {}
    row = result.first()
    return {k: int(v or 0) for k, v in row.asDict().items()} if row else {}


def _append_inserts(target: DeltaLocation, changes: DataFrame, keys: list[str], values: list[str],
                    app_id: str, batch_id: int, locked: bool) -> int:
    """What the MERGE inserts when no change matches a stored row: every change that is not a
    delete, with the columns its INSERT clause writes (plan.merge_plan), appended once per batch."""
    written = [*keys, *values, SEQ_COLUMN, TS_COLUMN]
    rows = changes.filter(F.col(OP) != "d").select(*[col(c) for c in written])
    return rows_appended(target, batch_id) if append_once(rows, target, app_id, batch_id, locked) else 0


def count_unresolved(spark: SparkSession, target: DeltaLocation, changes: DataFrame, keys: list[str],
                     values: list[str], key_range: tuple[int, int] | None = None,
                     version: int | None = None) -> dict[str, int]:
    """Per column, the NULLs the MERGE of `changes` is about to write for TOAST placeholders
    with no earlier value known (no change of the batch had one and the key has no stored row,
    or a delete came between). One job against the stored keys the MERGE reads (those in
    `key_range` only, when given; the table's `version`, when given, else its newest); only
    for batches with placeholders the batch itself could not answer.

    Each waiting change counts as an insert, corrected where a stored row is found. The few
    waiting changes are broadcast to the tasks that read the stored keys: an inner join, since
    Spark broadcasts only the side an outer join may drop, and a join that kept the changes
    would shuffle every stored key."""
    waiting = [col(toast_column(c)).isNotNull() & ~col(toast_column(c)).getField("known") for c in values]
    if not waiting:
        return {}
    read = [*keys, OP, SEQ_COLUMN, *[toast_column(c) for c in values]]
    candidates = changes.filter(any_of(waiting)).select(*[col(c) for c in read])
    stored = target.read(spark, version).select(*[col(k) for k in keys], SEQ_COLUMN)
    if key_range is not None:
        stored = stored.filter(col(keys[0]).between(*key_range))
    on = [F.col(f"s.{quote(k)}") == F.col(f"t.{quote(k)}") for k in keys]
    found = stored.alias("t").join(F.broadcast(candidates.alias("s")), all_of(on))
    as_insert, as_found = _unresolved_flags(values, "NULL"), _unresolved_flags(values, f"t.{SEQ_COLUMN}")
    names = [f"n{i}" for i in range(len(values))]
    inserts = candidates.alias("s").select(*[f.alias(n) for f, n in zip(as_insert, names)])
    corrections = found.select(*[(f - i).alias(n) for f, i, n in zip(as_found, as_insert, names)])
    sums = inserts.unionByName(corrections).agg(*[F.sum(n).alias(n) for n in names]).first()
    return {c: int(sums[n]) for c, n in zip(values, names) if sums[n]}


def _unresolved_flags(values: list[str], stored_seq: str) -> list[Column]:
    """Per column, 1 where the MERGE writes NULL for a placeholder, given the stored row's
    position (plan.unresolved_after_merge), else 0."""
    return [F.expr(unresolved_after_merge(c, stored_seq)).cast("int") for c in values]

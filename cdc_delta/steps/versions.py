"""A key's changes in source order -> its versions (SCD type 2). Runs no action.

Walked in source order per key: a row change (c, u, r) opens a version when none is open or
when a tracked column differs from the open version's, and else changes the open version in
place; a delete or a truncate closes the open version. A version starts at the change that
opened it and ends at the change after its last one (the one that closed or replaced it), or is
current. A TOAST placeholder takes the value of the newest earlier row change of the key with
one, never across a delete or a truncate (then it is NULL).

The history is a function of the set of changes alone, so a late change is placed where its
position puts it and the versions around it are re-linked by running this again."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..frame import END_AT, IS_CURRENT, OP, SEQ_COLUMN, START_AT, TS_COLUMN, scratch, unavailable
from ..infra.conditions import all_of
from ..infra.names import col

ENDS = ("d", "t")
SEGMENT, STARTS, VERSION, NEXT = scratch("segment"), scratch("starts"), scratch("version"), scratch("next")


def versions(changes: DataFrame, keys: list[str], values: list[str], tracked: list[str]) -> DataFrame:
    """`changes`: every change of some keys (keys, values, their TOAST flags, op, position,
    source time), a truncate once per key as op `t`. Returns those keys' versions: keys, values,
    START_AT and END_AT ({position, source_ts}) and IS_CURRENT."""
    by_key = Window.partitionBy(*[col(k) for k in keys]).orderBy(SEQ_COLUMN)
    upto = by_key.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    is_row = ~F.col(OP).isin(*ENDS)
    walked = changes.withColumn(SEGMENT, F.sum(F.col(OP).isin(*ENDS).cast("int")).over(upto))
    walked = _carry_toast(walked, keys, values, is_row)
    previous = [F.lag(F.col(OP)).over(by_key).alias(scratch("prev_op")),
                *[F.lag(col(c)).over(by_key).alias(scratch("prev", c)) for c in tracked]]
    walked = walked.select("*", *previous, F.lead(F.struct(
        F.col(SEQ_COLUMN).alias("position"), F.timestamp_millis(F.col(TS_COLUMN)).alias("source_ts"))).over(by_key)
        .alias(NEXT))
    same = all_of([col(c).eqNullSafe(col(scratch("prev", c))) for c in tracked]) if tracked else F.lit(True)
    opens = is_row & (F.col(scratch("prev_op")).isNull() | F.col(scratch("prev_op")).isin(*ENDS) | ~same)
    walked = walked.withColumn(VERSION, F.sum(opens.cast("int")).over(upto)).filter(is_row)
    return _one_row_per_version(walked, keys, values)


def _carry_toast(changes: DataFrame, keys: list[str], values: list[str], is_row: Column) -> DataFrame:
    """A placeholder takes the newest earlier value of its segment (the changes since the last
    delete or truncate), else NULL."""
    segment = Window.partitionBy(*[col(k) for k in keys], F.col(SEGMENT)).orderBy(SEQ_COLUMN) \
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    out = []
    for c in values:
        waiting = col(unavailable(c))
        donor = F.last(F.when(is_row & ~waiting, F.struct(col(c).alias("v"))), ignorenulls=True).over(segment)
        out.append(F.when(waiting, donor.getField("v")).otherwise(col(c)).alias(c))
    others = [col(c) for c in changes.columns if c not in values and c not in [unavailable(v) for v in values]]
    return changes.select(*others, *out)


def _one_row_per_version(rows: DataFrame, keys: list[str], values: list[str]) -> DataFrame:
    """A version's values are those of its last change; it ends where the change after that
    one stands."""
    last = F.max_by(F.struct(*[col(c) for c in values], F.col(NEXT).alias("next")), SEQ_COLUMN)
    first = F.min_by(F.struct(F.col(SEQ_COLUMN).alias("position"),
                              F.timestamp_millis(F.col(TS_COLUMN)).alias("source_ts")), SEQ_COLUMN)
    grouped = rows.groupBy(*[col(k) for k in keys], VERSION).agg(
        last.alias("last"), first.alias(START_AT))
    end = F.col("last").getField("next")
    return grouped.select(*[col(k) for k in keys], *[F.col("last")[c].alias(c) for c in values],
                          F.col(START_AT), end.alias(END_AT), end.isNull().alias(IS_CURRENT))

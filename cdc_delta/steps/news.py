"""A table's changes -> its news: the distinct changes newer than what the table holds of
their key and than its last truncate, as the table was before the batch. What a route forwards.
Runs no action.

A change counts once per source position, however often it was delivered: redeliveries after a
connector restart carry the old position with a new offset. Unlike the guard, the comparison
is by source position alone, so a redelivery of a change the table already holds is no news."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from ..frame import SEQ_COLUMN, scratch
from ..infra.conditions import all_of
from ..infra.names import col, quote
from .position import seq_literal

# the fields of a position that say where the source made the change; the others (where the
# record was read, its op's rank) tell deliveries of one change apart
SOURCE_FIELDS = ("text", "p1", "p2", "p3", "stream", "op_rank")
HELD = scratch("held")


def source_position(seq: Column) -> Column:
    """Where the source made a change, the same for every delivery of it."""
    return F.struct(*[seq.getField(f).alias(f) for f in SOURCE_FIELDS])


def first_deliveries(changes: DataFrame, keys: list[str]) -> DataFrame:
    """One delivery per key and source position: the first read."""
    every = [col(c) for c in changes.columns]
    return (changes.groupBy(*[col(k) for k in keys], source_position(F.col(SEQ_COLUMN)).alias(scratch("at")))
            .agg(F.min_by(F.struct(*every), F.col(SEQ_COLUMN)).alias(scratch("c")))
            .select(*[F.col(scratch("c"))[c].alias(c) for c in changes.columns]))


def news(changes: DataFrame, keys: list[str], held: DataFrame | None, truncate: Row | None) -> DataFrame:
    """`held`: per key, the positions the table holds of it (its row's, its tombstones'), or
    None when it holds nothing of any key; `truncate`: the table's last truncate, or None."""
    first = first_deliveries(changes, keys)
    fresh = F.lit(True)
    if held is not None:
        mine = held.join(changes.select(*[col(k) for k in keys]).distinct(), keys, "left_semi")
        newest = mine.groupBy(*[col(k) for k in keys]).agg(F.max(source_position(F.col(SEQ_COLUMN))).alias(HELD))
        same_key = all_of([F.col(f"c.{quote(k)}") == F.col(f"h.{quote(k)}") for k in keys])
        first = first.alias("c").join(newest.alias("h"), same_key, "left")
        at = source_position(F.col(f"c.{SEQ_COLUMN}"))
        fresh = F.col(HELD).isNull() | (at > F.col(HELD))
    if truncate is not None:
        fresh = fresh & (source_position(F.col(SEQ_COLUMN)) > source_position(seq_literal(truncate)))
    return first.filter(fresh).select(*[F.col(quote(c)) if held is None else F.col(f"c.{quote(c)}")
                                        for c in changes.columns])

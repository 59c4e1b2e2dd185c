"""The position guard: a change applies only if no tombstone of its key is newer and it is
newer than the table's last truncate.

The run holds each table's writer lock, so the newest tombstone and truncate positions it
wrote are known in the driver (`GuardBounds`, read from the tables once, then raised before
each write). A batch whose changes are all at or after the newest tombstone skips the anti-join
against the tombstone table, and the truncate barrier is a literal: in a stream read in order,
most batches read neither companion table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ..frame import SEQ_TYPE
from ..names import col
from .tables import SEQ_COLUMN, DeltaLocation, quote

SEQ_FIELDS = [f.split(":") for f in SEQ_TYPE[len("struct<"):-1].split(",")]


def seq_literal(row: Row) -> Column:
    """A ``_cdc_seq`` value collected to the driver, as a literal for comparisons."""
    return F.struct(*[F.lit(row[name]).cast(kind).alias(name) for name, kind in SEQ_FIELDS]).cast(SEQ_TYPE)


def seq_order(row: Row) -> tuple[Any, ...]:
    """A sort key that orders ``_cdc_seq`` values as Spark does (field by field, null first)."""
    return tuple((0,) if row[name] is None else (1, row[name]) for name, _ in SEQ_FIELDS)


def newer(a: Row | None, b: Row | None) -> Row | None:
    if a is None or b is None:
        return a if b is None else b
    return a if seq_order(a) >= seq_order(b) else b


@dataclass
class GuardBounds:
    """The newest tombstone and truncate positions of one table (None: there is none)."""

    tombstone: Row | None = None
    truncate: Row | None = None

    @classmethod
    def load(cls, spark: SparkSession, target: DeltaLocation) -> "GuardBounds":
        newest = F.max(SEQ_COLUMN).alias("newest")
        tomb = target.child("tombstones").read(spark).agg(newest)
        trunc = target.child("truncates").read(spark).agg(newest)
        row = tomb.crossJoin(trunc.withColumnRenamed("newest", "truncate")).first()
        return cls(row["newest"], row["truncate"])

    def older_than_tombstone(self) -> Column:
        """True for a change before the newest tombstone (a count of these decides the join)."""
        if self.tombstone is None:
            return F.lit(False)
        return F.col("_cdc_seq") < seq_literal(self.tombstone)

    def raise_tombstone(self, seq: Row) -> None:
        self.tombstone = newer(self.tombstone, seq)

    def raise_truncate(self, seq: Row) -> None:
        self.truncate = newer(self.truncate, seq)


def guard(spark: SparkSession, reduced: DataFrame, target: DeltaLocation, keys: list[str],
          bounds: GuardBounds, older_than_tombstone: bool) -> DataFrame:
    """Drop changes older than a tombstone of their key, or not newer than the table's last
    truncate. A delete at its own tombstone's position passes: its tombstone may be committed
    while the MERGE that applies it was not (merge_changes writes both at once).
    `older_than_tombstone`: some change of the batch is older than the newest tombstone."""
    alive = reduced
    if older_than_tombstone:
        tomb = target.child("tombstones").read(spark).select(*[col(k) for k in keys],
                                                              F.col(SEQ_COLUMN).alias("_cdc_tomb_seq"))
        r = reduced.alias("r")
        cond = tomb["_cdc_tomb_seq"] > F.col(f"r.{SEQ_COLUMN}")
        for k in keys:
            cond = cond & (F.col(f"r.{quote(k)}") == tomb[quote(k)])
        alive = r.join(tomb, cond, "left_anti")
    if bounds.truncate is not None:
        alive = alive.filter(F.col(SEQ_COLUMN) > seq_literal(bounds.truncate))
    return alive

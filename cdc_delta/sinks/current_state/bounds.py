"""The guard's positions of one table, kept in the driver between batches.

A run holds each table's writer lock, so the newest tombstone and truncate positions it wrote
are known in the driver: read from the companion tables once, then raised before each write.
A batch whose changes are all at or after the newest tombstone skips the anti-join against
the tombstone table, and the truncate barrier is a literal: in a stream read in order, most
batches read neither companion table. Without a lock (a catalog table, a user's own stream)
they are read again at every batch."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from ...frame import SEQ_COLUMN
from ...lake.tables import DeltaLocation
from ...steps.position import newer, seq_order


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

    def after(self, seq: Row | None) -> bool:
        """The newest tombstone is after position `seq` (a batch's oldest change): only then
        may a change of the batch be older than a tombstone, and the guard read them."""
        return self.tombstone is not None and seq is not None and seq_order(seq) < seq_order(self.tombstone)

    def raise_tombstone(self, seq: Row) -> None:
        self.tombstone = newer(self.tombstone, seq)

    def raise_truncate(self, seq: Row) -> None:
        self.truncate = newer(self.truncate, seq)

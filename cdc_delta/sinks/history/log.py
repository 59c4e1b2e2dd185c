"""The change log beside a history table: every distinct change it was given (a change once per
source position, however often it was delivered), and the table's truncates. The versions are
computed from it, so a late change re-links them exactly."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...config.types import SqlType
from ...frame import OP, SEQ_COLUMN, SEQ_TYPE, TS_COLUMN, unavailable
from ...infra.conditions import all_of
from ...infra.names import col, quote
from ...lake.tables import DeltaLocation, add_columns, columns_ddl, create_if_missing
from ...lake.writes import append_once
from ...steps.news import first_deliveries, source_position

META = f"{quote(OP)} string, {quote(SEQ_COLUMN)} {SEQ_TYPE}, {quote(TS_COLUMN)} bigint"


class ChangeLog:
    def __init__(self, spark: SparkSession, where: DeltaLocation, locked: bool) -> None:
        self.spark, self.locked = spark, locked
        self.changes, self.truncates = where.child("changes"), where.child("truncates")

    def locations(self) -> list[DeltaLocation]:
        return [self.changes, self.truncates]

    def prepare(self, keys: dict[str, SqlType], values: dict[str, SqlType]) -> None:
        flags = ", ".join(f"{quote(unavailable(c))} boolean" for c in values)
        create_if_missing(self.spark, self.changes, ", ".join(
            p for p in (columns_ddl({**keys, **values}), flags, META) if p), column_names=[*keys, *values])
        create_if_missing(self.spark, self.truncates, f"{quote(SEQ_COLUMN)} {SEQ_TYPE}, {quote(TS_COLUMN)} bigint")

    def add_columns(self, values: dict[str, SqlType]) -> None:
        add_columns(self.spark, self.changes, {**{c: t.name for c, t in values.items()},
                                               **{unavailable(c): "boolean" for c in values}})

    def record(self, rows: DataFrame, keys: list[str], values: list[str], app_id: str, batch_id: int
               ) -> DataFrame | None:
        """Append the batch's changes the log does not hold yet: one delivery per source
        position (the first read), idempotent per batch. Returns what the log now holds when it
        held nothing before (those changes: the log need not be read back), else None."""
        kept = [*keys, *values, *[unavailable(c) for c in values], OP, SEQ_COLUMN, TS_COLUMN]
        new = first_deliveries(rows.select(*[col(c) for c in kept]), keys)
        was_empty = self.holds_nothing(self.changes)
        if not was_empty:
            at = source_position(F.col(SEQ_COLUMN)).alias("at")
            logged = self.read().select(*[col(k) for k in keys], at)
            same = all_of([F.col(f"n.{quote(k)}") == F.col(f"o.{quote(k)}") for k in keys]
                          + [F.col("n.at").eqNullSafe(F.col("o.at"))])
            new = new.select("*", at).alias("n").join(logged.alias("o"), same, "left_anti").drop("at")
        append_once(new, self.changes, f"{app_id}:history", batch_id, self.locked)
        return new if was_empty else None

    def record_truncates(self, truncates: DataFrame, app_id: str, batch_id: int) -> None:
        """The batch's truncates the log does not hold yet."""
        at = source_position(F.col(SEQ_COLUMN)).alias("at")
        held = self.truncates.read(self.spark).select(at)
        new = truncates.select(SEQ_COLUMN, TS_COLUMN, at).alias("n").join(
            held.alias("o"), F.col("n.at").eqNullSafe(F.col("o.at")), "left_anti")
        append_once(new.drop("at"), self.truncates, f"{app_id}:history-truncates", batch_id, self.locked)

    def holds_nothing(self, where: DeltaLocation) -> bool:
        """Held under the writer lock, the log's table is as created: nothing to read from it."""
        return self.locked and where.as_created()

    def read(self) -> DataFrame:
        return self.changes.read(self.spark)

    def read_truncates(self) -> DataFrame:
        return self.truncates.read(self.spark)

"""One MERGE that makes the stored versions of some keys what they were computed to be: a
version is matched by its key and start, changed where it differs, inserted where new, and
removed where no computed version starts there any more. Into a table that holds no version,
the versions are appended instead."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...frame import START_AT, scratch
from ...infra.conditions import same_values
from ...infra.names import col, quote
from ...lake.tables import DeltaLocation
from ...lake.writes import append_once, rows_appended

DROP = scratch("drop")


@dataclass(frozen=True)
class Touched:
    """The keys a batch touched, and the range of their first key when it is an integer: rows
    outside it are not read, and Delta skips the files whose statistics lie outside it."""

    keys: DataFrame
    names: list[str]
    key_range: tuple[int, int] | None

    def of(self, rows: DataFrame) -> DataFrame:
        """The rows of the touched keys."""
        if self.key_range is not None:
            rows = rows.filter(col(self.names[0]).between(*self.key_range))
        return rows.join(self.keys, self.names, "left_semi")

    def target_condition(self) -> str:
        if self.key_range is None:
            return ""
        low, high = self.key_range
        return f" AND t.{quote(self.names[0])} BETWEEN {int(low)} AND {int(high)}"


def replace_versions(where: DeltaLocation, computed: DataFrame, keys: list[str],
                     touched: Touched | None) -> tuple[int, int]:
    """`computed`: every version of the touched keys (of every key when None). Returns the
    versions written (inserted or changed) and removed."""
    spark = computed.sparkSession
    stored = where.read(spark)
    if touched is not None:
        stored = touched.of(stored)
    identity = [*keys, START_AT]
    same_version = same_values(identity, "s", "c")
    gone = stored.alias("s").join(computed.alias("c"), same_version, "left_anti").select(
        *[col(c) for c in identity], F.lit(True).alias(DROP))
    source = computed.withColumn(DROP, F.lit(False)).unionByName(gone, allowMissingColumns=True)
    columns = list(computed.columns)
    on = " AND ".join(f"t.{quote(c)} <=> s.{quote(c)}" for c in identity) + (touched.target_condition() if touched else "")
    differs = " OR ".join(f"NOT (t.{quote(c)} <=> s.{quote(c)})" for c in columns if c not in identity)
    metrics = (where.table(spark).alias("t").merge(source.alias("s"), on)
               .whenMatchedDelete(condition=f"s.{DROP}")
               .whenMatchedUpdate(condition=f"NOT s.{DROP} AND ({differs})",
                                  set={quote(c): f"s.{quote(c)}" for c in columns})
               .whenNotMatchedInsert(condition=f"NOT s.{DROP}", values={quote(c): f"s.{quote(c)}" for c in columns})
               .execute())
    row = metrics.first() if metrics is not None else None
    counts = {k: int(v or 0) for k, v in row.asDict().items()} if row else {}
    return (counts.get("num_inserted_rows", 0) + counts.get("num_updated_rows", 0),
            counts.get("num_deleted_rows", 0))


def append_versions(where: DeltaLocation, computed: DataFrame, app_id: str, batch_id: int) -> int:
    """What `replace_versions` writes into a table that holds no version (every computed
    version is new), as one append under the writer lock; returns the versions written."""
    if not append_once(computed, where, f"{app_id}:versions", batch_id, locked=True):
        return 0
    return rows_appended(where, batch_id)

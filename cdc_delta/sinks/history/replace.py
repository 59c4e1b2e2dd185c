"""One MERGE that makes the stored versions of some keys what they were computed to be: a
version is matched by its key and start, changed where it differs, inserted where new, and
removed where no computed version starts there any more."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...frame import START_AT, scratch
from ...infra.conditions import all_of
from ...infra.names import col, quote
from ...lake.tables import DeltaLocation

DROP = scratch("drop")


def replace_versions(where: DeltaLocation, computed: DataFrame, keys: list[str],
                     touched: DataFrame | None) -> tuple[int, int]:
    """`computed`: every version of the keys in `touched` (of every key when None). Returns
    the versions written (inserted or changed) and removed."""
    spark = computed.sparkSession
    stored = where.read(spark)
    if touched is not None:
        stored = stored.join(touched, keys, "left_semi")
    identity = [*keys, START_AT]
    same_version = all_of([F.col(f"s.{quote(c)}").eqNullSafe(F.col(f"c.{quote(c)}")) for c in identity])
    gone = stored.alias("s").join(computed.alias("c"), same_version, "left_anti").select(
        *[col(c) for c in identity], F.lit(True).alias(DROP))
    source = computed.withColumn(DROP, F.lit(False)).unionByName(gone, allowMissingColumns=True)
    columns = list(computed.columns)
    on = " AND ".join(f"t.{quote(c)} <=> s.{quote(c)}" for c in identity)
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

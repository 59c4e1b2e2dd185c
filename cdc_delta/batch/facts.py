"""The batch's facts, read in two jobs: what came in (per topic-partition or file, table and
event schema), and, once decoded, what each table's changes are (per op). Everything else a
batch decides in the driver comes from these rows."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from ..frame import (AFTER, BEFORE, ERROR, IS_TOMBSTONE, OFFSET, OP, ORIGIN, PARTITION, SCHEMA, SCHEMA_ID,
                     SEQ_COLUMN, TABLE, TOPIC, TS_COLUMN, previous_key, unavailable)
from ..infra.names import col
from ..steps.view import TableView
from ..report import BatchReport


def read_origins(decoded: DataFrame) -> list[Row]:
    """Per topic-partition or file, table and event schema: the records, Kafka tombstones,
    last offset and envelope errors; for applicable events, the schema text and the image's
    column names (few distinct sets per batch), and a set of names that differ only by case."""
    ok = F.col(TABLE).isNotNull() & F.col(ERROR).isNull()
    envelope_bad = F.col(TABLE).isNull() & F.col(ERROR).isNotNull()
    image = F.when(F.col(OP) == "d", F.col(BEFORE)).otherwise(F.col(AFTER))
    names = F.map_keys(image)
    key_sets = F.collect_set(F.when(ok, F.array_sort(names)))
    # two fields of one image whose names differ only by case (one column under Spark's rule)
    folded = F.size(F.array_distinct(F.transform(names, F.lower))) < F.size(names)
    return (decoded.groupBy(TOPIC, PARTITION, ORIGIN, TABLE, SCHEMA_ID)
            .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col(IS_TOMBSTONE).cast("int")).alias("tomb"),
                 F.max(OFFSET).alias("last"), F.sum(envelope_bad.cast("int")).alias("bad"),
                 F.any_value(F.when(ok, F.col(SCHEMA)), True).alias("schema"),
                 F.when(F.max(ok.cast("int")) == 1, F.array_distinct(F.flatten(key_sets))).alias("schema_keys"),
                 F.any_value(F.when(ok & folded, F.array_sort(names)), True).alias("clash"))
            .collect())


def count_origins(origins: list[Row], report: BatchReport) -> int:
    """Records in, Kafka tombstones and the end offset of each topic-partition or file."""
    for r in origins:
        report.records_in += r["n"]
        report.kafka_tombstones += r["tomb"] or 0
        where = r[ORIGIN] or f"{r[TOPIC]}/{r[PARTITION]}"
        report.offsets[where] = max(r["last"], report.offsets.get(where, r["last"]))
    return report.records_in


def table_facts(changes: Mapping[str, DataFrame], views: Mapping[str, TableView],
                wanted: Mapping[str, dict[str, Column]]) -> tuple[dict[str, dict[str, Row]], int]:
    """One job for all tables: per table and op of its good changes, the count, newest and
    oldest position, newest source time, the range of the first key (when it is an integer),
    key changes, the columns in which a change still has a TOAST placeholder and the sums of
    the flags its sinks asked for (`wanted`: per table, name -> boolean Column); and the
    number of bad changes of all tables."""
    names = sorted({n for flags in wanted.values() for n in flags})
    parts = [df.select(F.lit(name).alias("table"), OP, F.col(ERROR).isNull().alias("ok"), SEQ_COLUMN, TS_COLUMN,
                       _orderable_key(views[name]).alias("key"),
                       col(previous_key(views[name].keys[0])).isNotNull().alias("kc"),
                       _placeholder_columns(views[name]).alias("phc"),
                       *[wanted.get(name, {}).get(n, F.lit(False)).alias(n) for n in names])
             for name, df in changes.items()]
    every = parts[0]
    for p in parts[1:]:
        every = every.unionAll(p)
    rows = every.groupBy("table", OP, "ok").agg(
        F.count(F.lit(1)).alias("n"), F.max(SEQ_COLUMN).alias("seq"), F.min(SEQ_COLUMN).alias("seq_min"),
        F.max(TS_COLUMN).alias("ts"),
        F.min("key").alias("key_min"), F.max("key").alias("key_max"),
        F.sum(F.col("kc").cast("int")).alias("key_changes"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_set("phc")))).alias("placeholder_columns"),
        *[F.sum(F.col(n).cast("int")).alias(n) for n in names]).collect()
    facts: dict[str, dict[str, Row]] = {}
    for r in rows:
        if r["ok"]:
            facts.setdefault(r["table"], {})[r[OP]] = r
    return facts, sum(r["n"] for r in rows if not r["ok"])


def _orderable_key(view: TableView) -> Column:
    """The first key as a bigint when it is an integer column (its range bounds the MERGE), else NULL."""
    first = view.keys[0]
    kind = view.columns[first].kind if first in view.columns else None
    return col(first).cast("bigint") if kind == "integral" else F.lit(None).cast("bigint")


def _placeholder_columns(view: TableView) -> Column:
    """The names of the columns whose value is still a TOAST placeholder."""
    names = [F.when(col(unavailable(c)), F.lit(c)) for c in view.values]
    return F.array_compact(F.array(*names, F.lit(None).cast("string")))

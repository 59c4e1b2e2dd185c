"""The batch's facts, read in two jobs: what came in (per topic-partition or file, table and
event schema), and, once decoded, what each table's changes are (per op). Everything else a
batch decides in the driver comes from these rows."""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from ..frame import (AFTER, BEFORE, ERROR, IS_TOMBSTONE, OFFSET, OP, ORIGIN, PARTITION, SCHEMA, SCHEMA_ID,
                     SEQ_COLUMN, TABLE, TOPIC, TS_COLUMN, previous_key, unavailable)
from ..infra.names import col
from ..steps.view import TableView
from ..report import BatchReport

ORIGIN_KEYS = (TOPIC, PARTITION, ORIGIN, TABLE, SCHEMA_ID)


def read_origins(decoded: DataFrame) -> list[Row]:
    """Per topic-partition or file, table and event schema: the records, Kafka tombstones,
    last offset and envelope errors; for applicable events, the schema text and the image's
    column names (few distinct sets per batch). One job (`origins_query`), whose few rows the
    driver merges."""
    return merge_origins(origins_query(decoded).collect())


def merge_origins(rows: list[Row]) -> list[Row]:
    """The rows of `origins_query`, one per topic-partition or file, table and event schema."""
    merged: dict[tuple, dict] = {}
    for r in rows:
        key = tuple(r[k] for k in ORIGIN_KEYS)
        _merge_origin(merged.setdefault(key, dict(zip(ORIGIN_KEYS, key))), r)
    return [_origin_row(m) for m in merged.values()]


def origins_query(decoded: DataFrame) -> DataFrame:
    """`read_origins` grouped also by the schema text and the image's sorted names: every
    aggregate is then a count, sum or max, which Spark compiles, where a set of names per
    group (collect_set) and a case check per record ran interpreted: 5.6 µs per record
    before, under 2 after (`python -m benchmarks.decode_stages`)."""
    grouping, aggregates = _origins_columns()
    return decoded.groupBy(*grouping).agg(*aggregates)


@lru_cache(maxsize=1)
def _origins_columns() -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """The grouping and aggregates of `origins_query`, built once: from Python, call by call
    through Py4J, they cost the driver 0.05 s before each batch's first job."""
    ok = F.col(TABLE).isNotNull() & F.col(ERROR).isNull()
    envelope_bad = F.col(TABLE).isNull() & F.col(ERROR).isNotNull()
    image = F.when(F.col(OP) == "d", F.col(BEFORE)).otherwise(F.col(AFTER))
    grouping = (*[F.col(k) for k in ORIGIN_KEYS], F.when(ok, F.col(SCHEMA)).alias("schema"),
                F.when(ok, F.sort_array(F.map_keys(image))).alias("names"))
    aggregates = (F.count(F.lit(1)).alias("n"), F.sum(F.col(IS_TOMBSTONE).cast("int")).alias("tomb"),
                  F.max(OFFSET).alias("last"), F.sum(envelope_bad.cast("int")).alias("bad"),
                  F.max(ok.cast("int")).alias("ok"))
    return grouping, aggregates


def _merge_origin(into: dict, r: Row) -> None:
    into["n"] = into.get("n", 0) + r["n"]
    into["tomb"] = into.get("tomb", 0) + (r["tomb"] or 0)
    into["bad"] = into.get("bad", 0) + (r["bad"] or 0)
    into["last"] = max((x for x in (into.get("last"), r["last"]) if x is not None), default=None)
    into["schema"] = into.get("schema") or r["schema"]
    if r["ok"]:
        into.setdefault("images", set()).add(tuple(r["names"] or ()))


def _origin_row(m: dict) -> Row:
    """schema_keys: every name of the applicable events' images (None when none applies);
    images: each distinct image's names, sorted (the driver looks for a case clash in them)."""
    images = m.pop("images", None)
    keys = None if images is None else sorted({n for names in images for n in names})
    return Row(**m, schema_keys=keys, images=sorted(list(i) for i in images or ()))


def count_origins(origins: list[Row], report: BatchReport) -> int:
    """Records in, Kafka tombstones and the end offset of each topic-partition or file."""
    for r in origins:
        report.records_in += r["n"]
        report.kafka_tombstones += r["tomb"] or 0
        where = r[ORIGIN] or f"{r[TOPIC]}/{r[PARTITION]}"
        report.offsets[where] = max(r["last"], report.offsets.get(where, r["last"]))
    return report.records_in


def table_facts(changes: Mapping[str, DataFrame], views: Mapping[str, TableView]
                ) -> tuple[dict[str, dict[str, Row]], int]:
    """One job for all tables: per table and op of its good changes, the count, newest and
    oldest position, newest source time, the range of the first key (when it is an integer),
    key changes and the columns in which a change still has a TOAST placeholder; and the
    number of bad changes of all tables."""
    parts = [df.select(*_fact_inputs(name, views[name])) for name, df in changes.items()]
    every = parts[0]
    for p in parts[1:]:
        every = every.unionAll(p)
    rows = every.groupBy("table", OP, "ok").agg(*_fact_aggregates()).collect()
    facts: dict[str, dict[str, Row]] = {}
    for r in rows:
        if r["ok"]:
            facts.setdefault(r["table"], {})[r[OP]] = r
    return facts, sum(r["n"] for r in rows if not r["ok"])


def _fact_inputs(name: str, view: TableView) -> tuple[Column, ...]:
    """What `table_facts` reads of one table's changes."""
    first = view.keys[0]
    integral = first in view.columns and view.columns[first].kind == "integral"
    return _fact_inputs_of(name, first, integral, tuple(view.values))


@lru_cache(maxsize=256)
def _fact_inputs_of(name: str, first_key: str, integral: bool, values: tuple[str, ...]) -> tuple[Column, ...]:
    """`_fact_inputs`, built once per table shape: from Python, call by call through Py4J,
    they cost the driver 0.04 s before each batch's facts job. The first key as a bigint when
    it is an integer column (its range bounds the MERGE), else NULL; and the names of the
    columns whose value is still a TOAST placeholder."""
    key = col(first_key).cast("bigint") if integral else F.lit(None).cast("bigint")
    placeholders = [F.when(col(unavailable(c)), F.lit(c)) for c in values]
    return (F.lit(name).alias("table"), F.col(OP), F.col(ERROR).isNull().alias("ok"), F.col(SEQ_COLUMN),
            F.col(TS_COLUMN), key.alias("key"), col(previous_key(first_key)).isNotNull().alias("kc"),
            F.array_compact(F.array(*placeholders, F.lit(None).cast("string"))).alias("phc"))


@lru_cache(maxsize=1)
def _fact_aggregates() -> tuple[Column, ...]:
    return (F.count(F.lit(1)).alias("n"), F.max(SEQ_COLUMN).alias("seq"), F.min(SEQ_COLUMN).alias("seq_min"),
            F.max(TS_COLUMN).alias("ts"), F.min("key").alias("key_min"), F.max("key").alias("key_max"),
            F.sum(F.col("kc").cast("int")).alias("key_changes"),
            F.array_sort(F.array_distinct(F.flatten(F.collect_set("phc")))).alias("placeholder_columns"))

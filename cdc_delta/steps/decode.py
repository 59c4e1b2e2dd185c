"""Raw records -> decoded records: the Debezium envelope parsed, each record routed to the
first configured table whose match it meets, unmatched records given a reason (or not), and the
raw value kept only where something reads it."""

from __future__ import annotations

from functools import lru_cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..config.models import Match, TableSpec
from ..debezium.envelope import parse_envelopes
from ..frame import ERROR, IS_TOMBSTONE, OP, SOURCE, TABLE, TOPIC, VALUE, VALUE_HASH


def decode(raw: DataFrame, tables: list[TableSpec], max_value_bytes: int, quarantine_unmatched: bool) -> DataFrame:
    matches = tuple((t.name, t.effective_match) for t in tables)
    routed = parse_envelopes(raw, max_value_bytes).withColumn(TABLE, _table_column(matches))
    routed = routed.withColumn(ERROR, _unmatched_error()) if quarantine_unmatched else routed
    forwarding = tuple(t.name for t in tables if any(route.format == "envelope" for route in t.routes))
    return routed.withColumns(_kept_value(forwarding))


@lru_cache(maxsize=64)
def _kept_value(forwarding: tuple[str, ...]) -> dict[str, Column]:
    """The raw value where something reads it: the quarantine, of a record bad as an envelope,
    and a table's route of whole events (of tables `forwarding`); elsewhere NULL, with the
    value's hash, by which the quarantine reads a bad change's value from the batch's records
    again (sinks/quarantine.py). The batch's cached records then do not hold every event twice,
    as bytes and as parsed: 100k-event snapshot batches 6.80 -> 6.25 s (0.92x), their tasks'
    garbage collection 0.93 -> 0.64 s; 10k-event batches 1.01x (benchmarks/ab.py)."""
    kept = F.col(ERROR).isNotNull() | F.col(TABLE).isin(*forwarding) if forwarding else F.col(ERROR).isNotNull()
    return {VALUE: F.when(kept, F.col(VALUE)), VALUE_HASH: F.xxhash64(VALUE)}


@lru_cache(maxsize=64)
def _table_column(matches: tuple[tuple[str, Match], ...]) -> Column:
    """The first configured table whose match the record meets (`matches`: name, match per
    table), built once per configuration: from Python, through Py4J, it costs the driver time."""
    name = F.lit(None).cast("string")
    for table, match in reversed(matches):
        name = F.when(_matches(match), F.lit(table)).otherwise(name)
    return name


@lru_cache(maxsize=1)
def _unmatched_error() -> Column:
    unmatched = F.col(TABLE).isNull() & ~F.col(IS_TOMBSTONE) & F.col(OP).isNotNull()
    return F.coalesce(ERROR, F.when(unmatched, unmatched_reason()))


def _matches(match: Match) -> Column:
    cond = F.lit(True)
    src = F.col(SOURCE)
    if match.topic:
        cond = cond & (F.col(TOPIC) == match.topic)
    for key, want in (("db", match.db), ("schema", match.schema_), ("table", match.table)):
        if want:
            cond = cond & (src.getItem(key) == want)
    return cond


def unmatched_reason() -> Column:
    src = F.col(SOURCE)
    return F.when(src.isNull(), F.format_string(
        "no 'source' block and no configured table matches topic '%s'", F.col(TOPIC))).otherwise(F.format_string(
        "no configured table matches topic '%s', source %s.%s.%s; add a table whose match "
        "names it, or set unmatched: skip", F.col(TOPIC), F.coalesce(src.db, F.lit("-")),
        F.coalesce(src.schema, F.lit("-")), F.coalesce(src.table, F.lit("-"))))

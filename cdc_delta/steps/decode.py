"""Raw records -> decoded records: the Debezium envelope parsed, each record routed to the
first configured table whose match it meets, unmatched records given a reason (or not)."""

from __future__ import annotations

from functools import lru_cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..config.models import Match, TableSpec
from ..debezium.envelope import parse_envelopes
from ..frame import ERROR, IS_TOMBSTONE, OP, SOURCE, TABLE, TOPIC


def decode(raw: DataFrame, tables: list[TableSpec], max_value_bytes: int, quarantine_unmatched: bool) -> DataFrame:
    matches = tuple((t.name, t.effective_match) for t in tables)
    routed = parse_envelopes(raw, max_value_bytes).withColumn(TABLE, _table_column(matches))
    return routed.withColumn(ERROR, _unmatched_error()) if quarantine_unmatched else routed


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

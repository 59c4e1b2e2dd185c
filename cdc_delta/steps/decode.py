"""Raw records -> decoded records: the Debezium envelope parsed, each record routed to the
first configured table whose match it meets, unmatched records given a reason (or not)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..config.models import Match, TableSpec
from ..debezium.envelope import parse_envelopes
from ..frame import ERROR, IS_TOMBSTONE, OP, SOURCE, TABLE, TOPIC


def decode(raw: DataFrame, tables: list[TableSpec], max_value_bytes: int, quarantine_unmatched: bool) -> DataFrame:
    routed = route(parse_envelopes(raw, max_value_bytes), tables)
    if not quarantine_unmatched:
        return routed
    unmatched = F.col(TABLE).isNull() & ~F.col(IS_TOMBSTONE) & F.col(OP).isNotNull()
    return routed.withColumn(ERROR, F.coalesce(ERROR, F.when(unmatched, unmatched_reason())))


def route(envelopes: DataFrame, tables: list[TableSpec]) -> DataFrame:
    """Add the table column: the first configured table whose match the record meets."""
    name = F.lit(None).cast("string")
    for table in reversed(tables):
        name = F.when(_matches(table.effective_match), F.lit(table.name)).otherwise(name)
    return envelopes.withColumn(TABLE, name)


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

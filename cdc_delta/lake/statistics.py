"""Which columns of a current-state table Delta keeps statistics for.

Delta writes each data file's minimum, maximum and null count per column into its log, by
default for the first 32 columns. cdc-delta names them: the table's own columns (the first 32
that can have a minimum and a maximum, as Delta's default would take them) and the source time,
but not the position. Its nine fields, strings among them, cost a MERGE about a fifth of its
time to track (python -m benchmarks.merge_variants: 4.13 s -> 3.28 s at 1M rows), and Delta
skips no file by them: the position is compared as a whole struct, and Delta skips files by
single columns only.

A table whose config sets either statistics property keeps the user's choice."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import SparkSession

from ..config.types import SqlType
from ..frame import TS_COLUMN
from ..infra.names import quote
from .tables import DeltaLocation, set_table_properties, table_properties

STATS_COLUMNS, STATS_COUNT = "delta.dataSkippingStatsColumns", "delta.dataSkippingNumIndexedCols"
DELTA_DEFAULT_COUNT = 32
NO_MIN_MAX = {"binary", "boolean"}   # Delta refuses these in STATS_COLUMNS


def user_chose(properties: Mapping[str, str]) -> bool:
    return STATS_COLUMNS in properties or STATS_COUNT in properties


def stats_property(columns: Mapping[str, SqlType]) -> dict[str, str]:
    """The statistics property for a table with these columns (its own, keys first)."""
    eligible = [c for c, t in columns.items() if t.name not in NO_MIN_MAX][:DELTA_DEFAULT_COUNT]
    return {STATS_COLUMNS: ",".join(quote(c) for c in [*eligible, TS_COLUMN])}


def with_stats_property(properties: Mapping[str, str], columns: Mapping[str, SqlType]) -> dict[str, str]:
    """A new table's properties: the config's, with the statistics property unless it sets one."""
    return dict(properties) if user_chose(properties) else {**stats_property(columns), **properties}


def keep_stats_property(spark: SparkSession, where: DeltaLocation, properties: Mapping[str, str],
                        columns: Mapping[str, SqlType]) -> None:
    """Set the statistics property again when the table's columns changed (columns added by
    schema_change: evolve), or on a table made before cdc-delta named them. One metadata
    commit when it changes, none otherwise."""
    if user_chose(properties):
        return
    wanted = stats_property(columns)
    stored = table_properties(spark, where)
    if STATS_COUNT not in stored and stored.get(STATS_COLUMNS) != wanted[STATS_COLUMNS]:
        set_table_properties(spark, where, wanted)

"""Which columns Delta keeps statistics for in a current-state table (lake/statistics.py), read
from the file entries of the table's own log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devtools.encode import EventWriter
from cdc_delta.lake.tables import META_COLUMNS

from .helpers import handler, make_config, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string", "flag": "boolean", "n": "bigint"}
PG = EventWriter("postgresql", "items", COLUMNS)


def items(**overrides):
    return {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": dict(COLUMNS), **overrides}


def row(i, n=0, **more):
    return {"id": i, "note": f"note {i}", "flag": True, "n": n, **more}


def newest_file_stats(table: Path) -> dict:
    """The statistics Delta wrote for the data file the newest commit added."""
    commit = sorted((table / "_delta_log").glob("*.json"))[-1]
    adds = [json.loads(line)["add"] for line in commit.read_text().splitlines() if '"add"' in line]
    return json.loads(adds[-1]["stats"])


def test_statistics_skip_the_position_and_keep_the_columns_and_the_source_time(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    handler(spark, config).process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1_000)]), 0)
    stats = newest_file_stats(tmp_path / "lake" / "items")
    assert sorted(stats["minValues"]) == ["_cdc_source_ts", "id", "n", "note"]   # no min/max for a boolean
    assert "_cdc_seq" not in stats["nullCount"]


def test_a_column_added_by_evolve_gets_statistics(spark, tmp_path):
    config = make_config(tmp_path, [items(schema_change="evolve")])
    h = handler(spark, config)
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1_000)]), 0)
    wider = EventWriter("postgresql", "items", {**COLUMNS, "extra": "string"})
    h.process(raw_batch(spark, [wider.event("c", None, row(2, extra="e"), 20, 2_000)], first_offset=1), 1)
    assert [r["extra"] for r in table_rows(spark, config, "items")] == [None, "e"]
    stats = newest_file_stats(tmp_path / "lake" / "items")
    assert stats["minValues"]["extra"] == "e"
    assert "_cdc_seq" not in stats["nullCount"]


def test_the_configs_statistics_property_is_kept(spark, tmp_path):
    config = make_config(tmp_path, [items(table_properties={"delta.dataSkippingNumIndexedCols": "1"})])
    handler(spark, config).process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1_000)]), 0)
    assert sorted(newest_file_stats(tmp_path / "lake" / "items")["minValues"]) == ["id"]


def test_a_table_made_before_gets_the_property_at_its_first_batch(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    table = tmp_path / "lake" / "items"
    columns = "`id` bigint, `note` string, `flag` boolean, `n` bigint"
    spark.sql(f"CREATE TABLE delta.`{table}` ({columns}, {META_COLUMNS}) USING delta")
    handler(spark, config).process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1_000)]), 0)
    assert table_rows(spark, config, "items") == [row(1)]
    assert "_cdc_seq" not in newest_file_stats(table)["nullCount"]

"""Deletion vectors (lake/deletion_vectors.py): a new current-state table has them, a MERGE of
a batch that is a small share of the table marks the rows it replaces, and one of a large
share copies the files it touches instead, whether the run holds the table's writer lock or not;
the table ends the same either way. The figures the choice reads (DeltaLocation.checksum) are
the same from the checksum file and from Delta's snapshot in the JVM."""

from __future__ import annotations

import json

import pytest

from devtools.encode import EventWriter
from cdc_delta.lake import file_stats
from cdc_delta.lake.deletion_vectors import ENABLE
from cdc_delta.lake.tables import DeltaLocation, table_properties

from cdc_delta.batch.runner import BatchHandler

from .helpers import make_config, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string"}
PG = EventWriter("postgresql", "items", COLUMNS)
STORED = 100


def items(**overrides):
    return {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": dict(COLUMNS), **overrides}


def where(config) -> DeltaLocation:
    return DeltaLocation.of(config.target_of(config.tables[0]))


def newest_commit(config) -> dict:
    return next(where(config).commits_newest_first())


def updates(keys, lsn):
    return [PG.event("u", None, {"id": i, "note": f"{i} at {lsn}"}, lsn + n, 2) for n, i in enumerate(keys)]


def run_batches(spark, config, *batches, locked=True):
    """Snapshot `STORED` rows, then each batch of updated keys; returns each batch's newest commit.
    `locked`: the run holds the table's writer lock (else, as in a user's own stream, it does not)."""
    h = BatchHandler(spark, config, locked=locked)
    h.prepare()
    h.process(raw_batch(spark, [PG.event("r", None, {"id": i, "note": "v0"}, 10, 1, snapshot=True)
                                for i in range(STORED)]), 0)
    commits, offset = [], STORED
    for batch_id, keys in enumerate(batches, start=1):
        h.process(raw_batch(spark, updates(keys, 100 * batch_id), first_offset=offset), batch_id)
        commits.append(newest_commit(config))
        offset += len(keys)
    return commits


@pytest.mark.parametrize("locked", [True, False], ids=["held", "not held"])
def test_a_small_batch_marks_rows_and_a_large_one_copies_files(spark, tmp_path, locked):
    config = make_config(tmp_path, [items()])
    small, large, again = [7], list(range(20, 30)), list(range(40, 50))       # 1%, 10%, 10% of the rows
    marked, copied, copied_again = run_batches(spark, config, small, large, again, locked=locked)
    assert table_properties(spark, where(config))[ENABLE] == "true"
    assert marked["operation"] == copied["operation"] == "MERGE"
    assert int(marked["operationMetrics"]["numTargetDeletionVectorsAdded"]) == 1
    assert int(copied["operationMetrics"]["numTargetDeletionVectorsAdded"]) == 0
    assert int(copied["operationMetrics"]["numTargetFilesRemoved"]) >= 1
    assert int(copied_again["operationMetrics"]["numTargetDeletionVectorsAdded"]) == 0
    # each MERGE in the session's copy records its own batch, as recovery reads it back
    assert [json.loads(c["userMetadata"])["batch_id"] for c in (copied, copied_again)] == [2, 3]
    notes = {7: "7 at 100", **{i: f"{i} at 200" for i in large}, **{i: f"{i} at 300" for i in again}}
    assert table_rows(spark, config, "items") == [{"id": i, "note": notes.get(i, "v0")} for i in range(STORED)]


def test_a_table_configured_without_them_copies_files(spark, tmp_path):
    config = make_config(tmp_path, [items(table_properties={ENABLE: "false"})])
    (merged,) = run_batches(spark, config, [7])
    assert table_properties(spark, where(config))[ENABLE] == "false"
    assert int(merged["operationMetrics"]["numTargetDeletionVectorsAdded"]) == 0
    assert table_rows(spark, config, "items")[7] == {"id": 7, "note": "7 at 100"}


def test_the_checksum_read_from_the_file_and_from_delta_agree(spark, tmp_path):
    path, name = str(tmp_path / "marked"), f"checksum_{tmp_path.name}".replace("-", "_")
    spark.sql(f"CREATE TABLE {name} (id bigint) USING delta LOCATION '{path}' TBLPROPERTIES ('{ENABLE}' = 'true')")
    try:
        spark.range(100).repartition(2).write.format("delta").mode("append").save(path)
        spark.sql(f"DELETE FROM {name} WHERE id % 10 = 0")
        from_file, from_delta = DeltaLocation(path=path).checksum(), DeltaLocation(name=name).checksum(spark)
        figures = ("version", "numFiles", "numDeletedRecordsOpt", "tableSizeBytes")
        assert {k: from_delta[k] for k in figures} == {k: from_file[k] for k in figures}
        assert (from_delta["version"], from_delta["numFiles"], from_delta["numDeletedRecordsOpt"]) == (2, 2, 10)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("mapped", [False, True], ids=["by name", "column mapping"])
def test_the_rows_and_key_bounds_the_checksum_lists_agree_with_delta(spark, tmp_path, mapped):
    """lake/file_stats.py: the rows less those deletion vectors mark, and bounds that hold every
    stored key (a file's statistics keep its marked rows); no bounds where the statistics name
    columns otherwise."""
    path = str(tmp_path / "listed")
    mapping = ", 'delta.columnMapping.mode' = 'name'" if mapped else ""
    spark.sql(f"CREATE TABLE delta.`{path}` (id bigint) USING delta TBLPROPERTIES ('{ENABLE}' = 'true'{mapping})")
    spark.range(100).repartition(2).write.format("delta").mode("append").save(path)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id % 10 = 0")
    checksum = DeltaLocation(path=path).checksum()
    assert checksum["numDeletedRecordsOpt"] == 10
    assert file_stats.live_rows(checksum) == spark.read.format("delta").load(path).count() == 90
    assert file_stats.int_bounds(checksum, "id") == (None if mapped else (0, 99))

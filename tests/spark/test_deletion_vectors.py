"""Deletion vectors (lake/deletion_vectors.py): a new current-state table has them, a MERGE of
a batch that is a small share of the table marks the rows it replaces, and one of a large
share copies the files it touches instead; the table ends the same either way."""

from __future__ import annotations

import json

import pytest

from devtools.encode import EventWriter
from cdc_delta.lake.deletion_vectors import ENABLE
from cdc_delta.lake.tables import DeltaLocation, table_properties

from .helpers import handler, make_config, raw_batch, table_rows

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


def run_batches(spark, config, *batches):
    """Snapshot `STORED` rows, then each batch of updated keys; returns each batch's newest commit."""
    h = handler(spark, config)
    h.process(raw_batch(spark, [PG.event("r", None, {"id": i, "note": "v0"}, 10, 1, snapshot=True)
                                for i in range(STORED)]), 0)
    commits, offset = [], STORED
    for batch_id, keys in enumerate(batches, start=1):
        h.process(raw_batch(spark, updates(keys, 100 * batch_id), first_offset=offset), batch_id)
        commits.append(newest_commit(config))
        offset += len(keys)
    return commits


def test_a_small_batch_marks_rows_and_a_large_one_copies_files(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    small, large, again = [7], list(range(20, 30)), list(range(40, 50))       # 1%, 10%, 10% of the rows
    marked, copied, copied_again = run_batches(spark, config, small, large, again)
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

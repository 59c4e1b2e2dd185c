"""A table's rows and a column's bounds from the files its checksum lists (lake/file_stats.py):
given only where the listing tells them exactly."""

from __future__ import annotations

import json

from cdc_delta.lake.file_stats import int_bounds, live_rows


def add(rows=None, low=None, high=None, marked=None, column="id", stats=True):
    entry = {"path": "part.parquet", "size": 1}
    if stats:
        bounds = {k: v for k, v in (("minValues", low), ("maxValues", high)) if v is not None}
        entry["stats"] = json.dumps({"numRecords": rows, **{k: {column: v} for k, v in bounds.items()}})
    if marked is not None:
        entry["deletionVector"] = {"storageType": "u", "cardinality": marked}
    return entry


def checksum(*files, mapping=None, listed=None):
    configuration = {"delta.columnMapping.mode": mapping} if mapping else {}
    return {"numFiles": len(files) if listed is None else listed, "allFiles": list(files),
            "metadata": {"configuration": configuration}}


def test_the_rows_are_the_files_rows_less_those_marked_deleted():
    assert live_rows(checksum(add(100, 0, 99, marked=3), add(50, 100, 149))) == 147
    assert live_rows(checksum()) == 0


def test_the_bounds_span_the_files_that_hold_rows():
    assert int_bounds(checksum(add(100, 5, 99, marked=3), add(0), add(50, 100, 149)), "id") == (5, 149)
    assert int_bounds(checksum(add(0)), "id") is None          # no row: nothing to bound


def test_a_listing_that_does_not_tell_exactly_gives_nothing():
    assert live_rows({"numFiles": 2, "tableSizeBytes": 10}) is None              # no file list
    assert live_rows(checksum(add(10, 0, 9), listed=2)) is None                  # not every file
    assert live_rows(checksum(add(10, 0, 9), add(stats=False))) is None          # a file without statistics
    assert int_bounds(checksum(add(10, 0, 9), add(10, 10, 19, column="other")), "id") is None
    assert int_bounds(checksum(add(10, 0, 9), mapping="name"), "id") is None     # stored under other names
    assert int_bounds({**checksum(add(10, 0, 9)), "metadata": None}, "id") is None
    assert int_bounds(checksum(add(10, "a", "z")), "id") is None                 # not whole numbers
    assert int_bounds(checksum(add(10, 0, 9.5)), "id") is None
    assert int_bounds(checksum(add(10, False, True)), "id") is None


def test_a_listing_under_another_mapping_still_counts_rows():
    assert live_rows(checksum(add(10, 0, 9), mapping="name")) == 10
    assert int_bounds(checksum(add(10, 0, 9), mapping="none"), "id") == (0, 9)

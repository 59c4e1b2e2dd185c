"""A batch whose keys lie outside every stored key is appended, not merged
(sinks/current_state: key_span.py, merge.py): the table ends as the MERGE would leave it."""

from __future__ import annotations

import pytest

from devtools.encode import EventWriter
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER
from cdc_delta.lake import file_stats
from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.sinks.current_state import CurrentState

from .helpers import handler, make_config, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string", "n": "bigint"}
PG = EventWriter("postgresql", "items", COLUMNS)


def items(**overrides):
    return {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": dict(COLUMNS), **overrides}


def row(i, note="x", n=0):
    return {"id": i, "note": note, "n": n}


def newest_operation(config, name="items") -> str:
    spec = next(t for t in config.tables if t.name == name)
    return next(DeltaLocation.of(config.target_of(spec)).commits_newest_first())["operation"]


def written(config, report, name="items") -> tuple[str, str]:
    """The table's newest commit, and how the batch's report says its changes were written."""
    return newest_operation(config, name), report.tables[name].written_by


def tombstone_keys(spark, config) -> list[int]:
    where = DeltaLocation.of(config.target_of(config.tables[0])).child("tombstones")
    return sorted(r["id"] for r in where.read(spark).collect())


def test_a_first_batch_is_appended_as_the_merge_would_write_it(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    report, _ = handler(spark, config).process(raw_batch(spark, [
        PG.event("r", None, row(1, "one"), 10, 1, snapshot=True),
        PG.event("r", None, row(2, "two"), 10, 1, snapshot=True),
        PG.event("u", None, row(2, "two v2", 1), 20, 2),
        PG.event("c", None, row(3, "three"), 21, 2),
        PG.event("d", row(3), None, 22, 2),                          # inserted, then deleted
        PG.event("d", row(9), None, 23, 2),                          # a key never stored
        PG.event("u", None, row(4, TOAST_PLACEHOLDER, 4), 24, 2),    # no value known: NULL, counted
        PG.event("u", None, row(5, TOAST_PLACEHOLDER, 5), 25, 2),
        PG.event("c", None, row(6, "six"), 26, 2),
        PG.event("u", None, row(6, TOAST_PLACEHOLDER, 6), 27, 2),    # takes 'six' of this batch
    ]), 0)
    assert written(config, report) == ("WRITE", "appended")
    assert table_rows(spark, config, "items") == [
        row(1, "one"), row(2, "two v2", 1), row(4, None, 4), row(5, None, 5), row(6, "six", 6)]
    figures = report.tables["items"]
    assert (figures.inserted, figures.updated, figures.deleted) == (5, 0, 0)
    assert figures.toast_unresolved_columns == {"note": 2}
    assert report.skipped == 5      # the superseded changes of 2, 3 and 6, and the two deletes
    assert tombstone_keys(spark, config) == [3, 9]


def test_new_keys_above_the_stored_ones_are_appended_and_a_resnapshot_merges(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    h = handler(spark, config)
    h.process(raw_batch(spark, [PG.event("r", None, row(i, f"v{i}"), 10, 1, snapshot=True) for i in (1, 2, 3)]), 0)
    report, _ = h.process(raw_batch(spark, [PG.event("r", None, row(i, f"v{i}"), 10, 1, snapshot=True)
                                            for i in (4, 5)], first_offset=3), 1)
    assert written(config, report) == ("WRITE", "appended") and report.tables["items"].inserted == 2
    # a snapshot taken again: every key is stored, so the changes are merged
    report, _ = h.process(raw_batch(spark, [PG.event("r", None, row(i, f"again {i}", 1), 30, 3, snapshot=True)
                                            for i in (5, 3, 1)], first_offset=5), 2)
    assert written(config, report) == ("MERGE", "merged") and report.tables["items"].updated == 3
    # an old change of a key between stored ones is merged, and the guard keeps the newer row
    h.process(raw_batch(spark, [PG.event("u", None, row(3, "stale"), 20, 2)], first_offset=8), 3)
    assert newest_operation(config) == "MERGE"
    assert table_rows(spark, config, "items") == [
        row(1, "again 1", 1), row(2, "v2"), row(3, "again 3", 1), row(4, "v4"), row(5, "again 5", 1)]


def test_a_batch_reaching_into_the_stored_keys_at_an_edge_is_appended_only_when_none_is_stored(spark, tmp_path):
    """Kafka partitions read in key order end at different keys: the next batch starts a
    little below the newest stored key."""
    config = make_config(tmp_path, [items()])
    h = handler(spark, config)
    h.process(raw_batch(spark, [PG.event("r", None, row(i), 10, 1, snapshot=True) for i in range(1, 21) if i != 19]), 0)
    report, _ = h.process(raw_batch(spark, [PG.event("r", None, row(i), 10, 1, snapshot=True)
                                            for i in (19, *range(21, 201))], first_offset=19), 1)
    assert written(config, report) == ("WRITE", "appended") and report.tables["items"].inserted == 181
    report, _ = h.process(raw_batch(spark, [PG.event("u", None, row(200, "new"), 20, 2),
                                            *[PG.event("c", None, row(i), 21, 2) for i in range(201, 401)]],
                                    first_offset=200), 2)
    assert written(config, report) == ("MERGE", "merged")        # 200 is stored
    assert (report.tables["items"].inserted, report.tables["items"].updated) == (200, 1)
    assert table_rows(spark, config, "items") == [row(i, "new" if i == 200 else "x") for i in range(1, 401)]


def test_a_deleted_key_inside_the_span_is_merged_and_its_tombstone_guards(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    h = handler(spark, config)
    h.process(raw_batch(spark, [PG.event("c", None, row(i), 10 + i, 1) for i in (1, 2, 3)]), 0)
    h.process(raw_batch(spark, [PG.event("d", row(3), None, 20, 2)], first_offset=3), 1)
    # 3 is no longer stored, but the span keeps it: a late create of 3 is merged and guarded
    h.process(raw_batch(spark, [PG.event("c", None, row(3, "late"), 13, 1)], first_offset=4), 2)
    assert newest_operation(config) == "MERGE"
    assert table_rows(spark, config, "items") == [row(1), row(2)]


def test_a_replayed_append_writes_nothing_twice(spark, tmp_path):
    config = make_config(tmp_path, [items()])
    first = [PG.event("c", None, row(i, f"v{i}"), 10 + i, 1) for i in (1, 2)]
    handler(spark, config).process(raw_batch(spark, first), 0)
    # a crash before the checkpoint: the next run starts afresh and replays the batch
    report, _ = handler(spark, config).process(raw_batch(spark, first), 0)
    assert report.tables["items"].inserted == 0 and report.tables["items"].written_by == "merged"
    assert table_rows(spark, config, "items") == [row(1, "v1"), row(2, "v2")]


def test_keys_of_no_integer_range_are_merged(spark, tmp_path):
    columns = {"code": "string", "note": "string"}
    writer = EventWriter("postgresql", "codes", columns)
    config = make_config(tmp_path, [{"name": "codes", "match": {"table": "codes"}, "keys": ["code"],
                                     "columns": columns}])
    handler(spark, config).process(raw_batch(spark, [writer.event("c", None, {"code": "a", "note": "x"}, 10, 1)]), 0)
    assert newest_operation(config, "codes") == "MERGE"
    assert table_rows(spark, config, "codes") == [{"code": "a", "note": "x"}]


def table_reads(monkeypatch) -> list[str]:
    """The reads of the current-state table itself that the sink starts (its companions' aside)."""
    reads: list[str] = []
    original = CurrentState._read_newest

    def spy(self, where):
        if where == self.where:
            reads.append(where.label)
        return original(self, where)
    monkeypatch.setattr(CurrentState, "_read_newest", spy)
    return reads


def snapshot_batch(spark, keys, first_offset):
    return raw_batch(spark, [PG.event("r", None, row(i), 10, 1, snapshot=True) for i in keys], first_offset=first_offset)


def test_the_keys_an_append_wrote_at_the_top_answer_for_the_next_batch_edge(spark, tmp_path, monkeypatch):
    """Kafka partitions of a snapshot end at different keys: after an append that met an edge,
    the next batch's edge lies among the keys that append wrote, which the run holds
    (top_keys.py), so the table is not read for it."""
    config = make_config(tmp_path, [items()])
    h = handler(spark, config)
    reads = table_reads(monkeypatch)
    h.process(snapshot_batch(spark, [i for i in range(1, 101) if i != 95], 0), 0)
    report, _ = h.process(snapshot_batch(spark, [95, *[i for i in range(101, 301) if i != 290]], 99), 1)
    assert written(config, report) == ("WRITE", "appended") and len(reads) == 1   # edge 95..100, nothing held
    report, _ = h.process(snapshot_batch(spark, [290, *range(301, 501)], 299), 2)       # edge 290..300, held
    assert written(config, report) == ("WRITE", "appended") and report.tables["items"].inserted == 201
    assert len(reads) == 1
    # 480 is stored, among the held keys (those above 478): merged
    report, _ = h.process(raw_batch(spark, [PG.event("u", None, row(480, "new"), 20, 2),
                                            *[PG.event("c", None, row(i), 21, 2) for i in range(501, 801)]],
                                    first_offset=500), 3)
    assert written(config, report) == ("MERGE", "merged") and len(reads) == 1
    assert (report.tables["items"].inserted, report.tables["items"].updated) == (300, 1)
    assert table_rows(spark, config, "items") == [row(i, "new" if i == 480 else "x") for i in range(1, 801)]


def test_an_edge_below_the_held_keys_or_after_another_commit_is_asked_of_the_table(spark, tmp_path, monkeypatch):
    config = make_config(tmp_path, [items()])
    h = handler(spark, config)
    reads = table_reads(monkeypatch)
    h.process(snapshot_batch(spark, [i for i in range(1, 301) if i != 299], 0), 0)
    h.process(snapshot_batch(spark, [299, *range(301, 601)], 299), 1)    # edge 299..300: holds the keys above 568
    assert len(reads) == 1
    # an update of 560, stored below the held keys: the table is read
    report, _ = h.process(raw_batch(spark, [PG.event("u", None, row(560, "new"), 20, 2),
                                            *[PG.event("c", None, row(i), 21, 2) for i in range(601, 1001) if i != 999]],
                                    first_offset=600), 2)
    assert written(config, report) == ("MERGE", "merged") and len(reads) == 2
    assert report.tables["items"].updated == 1
    h.process(snapshot_batch(spark, [999, *range(1001, 1301)], 1000), 3)   # edge 999..1000: holds those above 1269
    assert len(reads) == 3
    DeltaLocation.of(config.target_of(config.tables[0])).table(spark).optimize().executeCompaction()
    report, _ = h.process(snapshot_batch(spark, [1280, *range(1301, 1601)], 1301), 4)
    assert written(config, report) == ("MERGE", "merged") and len(reads) == 4    # 1280 is stored
    assert table_rows(spark, config, "items") == [row(i, "new" if i == 560 else "x") for i in range(1, 1601)]


def test_a_restarted_run_takes_the_stored_keys_span_from_the_checksum(spark, tmp_path, monkeypatch):
    """A run's first batch into a table with rows reads the span of its first key from the files
    the table's checksum lists (lake/file_stats.py), not with a Spark job; a snapshot taken
    again is still merged and new keys above the span appended."""
    config = make_config(tmp_path, [items()])
    handler(spark, config).process(snapshot_batch(spark, range(1, 21), 0), 0)
    listed = []
    original = file_stats.int_bounds
    monkeypatch.setattr(file_stats, "int_bounds", lambda *a: listed.append(original(*a)) or listed[-1])
    h = handler(spark, config)           # a restart: the span is read again
    report, _ = h.process(raw_batch(spark, [PG.event("r", None, row(i, "again"), 30, 3, snapshot=True)
                                            for i in (15, 10, 5)], first_offset=20), 1)
    assert listed == [(1, 20)]
    assert written(config, report) == ("MERGE", "merged") and report.tables["items"].updated == 3
    report, _ = h.process(snapshot_batch(spark, range(21, 31), 23), 2)
    assert written(config, report) == ("WRITE", "appended") and report.tables["items"].inserted == 10
    assert table_rows(spark, config, "items") == [row(i, "again" if i in (5, 10, 15) else "x") for i in range(1, 31)]

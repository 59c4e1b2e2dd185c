"""DESIGN.md's semantics, one batch at a time through the real batch handler and Delta."""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal

import pytest
from delta.tables import DeltaTable
from pyspark.sql import functions as F

from devtools.encode import EventWriter
from cdc_delta.batch.runner import BatchHandler
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER
from cdc_delta.errors import SchemaChangeRefused, TruncateRefused, WriterBusy
from cdc_delta.frame import SEQ_COLUMN, SEQ_TYPE, TS_COLUMN
from cdc_delta.ops.replay import replay_quarantine
from cdc_delta.run.writer_lock import exclusive
from cdc_delta.sinks.current_state import companions
from cdc_delta.sinks.current_state.recent_tombstones import KEEP_BATCHES, held_copy

from .helpers import handler, make_config, quarantine_rows, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string", "n": "bigint"}
PG = EventWriter("postgresql", "items", COLUMNS)


def items(**overrides):
    return {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": dict(COLUMNS), **overrides}


def setup(spark, tmp_path, **table_overrides):
    config = make_config(tmp_path, [items(**table_overrides)])
    return config, handler(spark, config)


def row(i, note="x", n=0):
    return {"id": i, "note": note, "n": n}


def test_toast_placeholder_keeps_stored_value_across_and_within_batches(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "long text"), 10, 1),
                                PG.event("c", None, row(2, "two"), 11, 1)]), 0)
    h.process(raw_batch(spark, [
        PG.event("u", None, row(1, TOAST_PLACEHOLDER, 5), 20, 2),                  # keeps 'long text'
        PG.event("u", None, row(2, "two v2", 1), 21, 2),
        PG.event("u", None, row(2, TOAST_PLACEHOLDER, 2), 22, 2),                  # takes 'two v2' of this batch
        PG.event("c", None, row(3, "three"), 23, 2),
        PG.event("u", None, row(3, TOAST_PLACEHOLDER, 3), 24, 2),                  # insert + update in one batch
    ], first_offset=10), 1)
    assert table_rows(spark, config, "items") == [row(1, "long text", 5), row(2, "two v2", 2), row(3, "three", 3)]


def test_key_change_takes_toast_values_from_the_old_key(spark, tmp_path):
    """Postgres `UPDATE items SET id = 2 WHERE id = 1` with REPLICA IDENTITY DEFAULT: a delete of
    1 (key only) and a create of 2 whose unchanged TOASTed text is a placeholder, with the old
    key in the `__debezium.oldkey` header."""
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "one text"), 10, 1),
                                PG.event("c", None, row(5, "five text"), 11, 1),
                                PG.event("c", None, row(7, "seven text"), 12, 1)]), 0)
    h.process(raw_batch(spark, [
        PG.event("u", None, row(5, "five v2", 1), 20, 2),
        PG.event("d", {"id": 1}, None, 21, 2),
        PG.event("c", None, row(2, TOAST_PLACEHOLDER, 2), 21, 2),     # from the stored row of 1
        PG.event("d", {"id": 5}, None, 22, 2),
        PG.event("c", None, row(6, TOAST_PLACEHOLDER, 3), 22, 2),     # from this batch's update of 5
        PG.event("u", None, row(6, TOAST_PLACEHOLDER, 4), 23, 2),     # and kept by a later update
        PG.event("d", {"id": 2}, None, 25, 2),
        PG.event("c", None, row(9, TOAST_PLACEHOLDER, 6), 25, 2),     # a chain: 1 -> 2 -> 9
        PG.event("c", None, row(1, "one again"), 30, 3),              # 1 re-inserted after the change
        PG.event("d", {"id": 7}, None, 40, 4),                        # the batch ends inside a key change
    ], first_offset=10, old_keys={2: '{"id":1}', 4: '{"schema":{"type":"struct"},"payload":{"id":5}}',
                                  7: '{"id":2}'}), 1)
    assert table_rows(spark, config, "items") == [row(1, "one again"), row(6, "five v2", 4), row(9, "one text", 6)]
    h.process(raw_batch(spark, [PG.event("c", None, row(8, TOAST_PLACEHOLDER, 5), 40, 4)],  # 7 is deleted by now
                        first_offset=20, old_keys={0: '{"id":7}'}), 2)
    assert table_rows(spark, config, "items") == [
        row(1, "one again"), row(6, "five v2", 4), row(8, "seven text", 5), row(9, "one text", 6)]


def test_truncate_is_an_ordered_barrier(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), PG.event("c", None, row(2), 11, 1)]), 0)
    report, _ = h.process(raw_batch(spark, [
        PG.event("c", None, row(3), 20, 2), PG.truncate(30, 3), PG.event("c", None, row(4), 40, 4),
    ], first_offset=2), 1)
    assert table_rows(spark, config, "items") == [row(4)]
    figures = report.tables["items"]
    assert (figures.truncates, figures.truncated_rows, figures.inserted) == (1, 2, 1)
    assert report.skipped == 1  # the insert of 3 before the truncate
    # a late insert from before the truncate can not bring a row back
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "late"), 15, 1)], first_offset=5), 2)
    assert table_rows(spark, config, "items") == [row(4)]


def test_truncate_policies(spark, tmp_path):
    config, h = setup(spark, tmp_path / "ignore", truncate="ignore")
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), PG.truncate(20, 2)]), 0)
    assert table_rows(spark, config, "items") == [row(1)]
    config, h = setup(spark, tmp_path / "fail", truncate="fail")
    with pytest.raises(TruncateRefused) as info:
        h.process(raw_batch(spark, [PG.truncate(20, 2)]), 0)
    assert info.value.table == "items"


def test_the_truncate_marker_and_toast_counts_are_kept_exactly_without_a_python_worker(spark, tmp_path, monkeypatch):
    """The companions' one-row frames (a truncate's marker, a batch's unresolved TOAST counts)
    are built in the JVM: a frame of Python rows would start Python workers to be written."""
    written = []
    real_append = companions.append_once
    monkeypatch.setattr(companions, "append_once", lambda frame, *a: written.append(frame) or real_append(frame, *a))
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), PG.truncate(30, 3)]), 0)
    h.process(raw_batch(spark, [PG.event("u", None, row(2, TOAST_PLACEHOLDER, 2), 40, 4)], first_offset=2), 1)
    assert len(written) == 2 and all("PythonRDD" not in f._jdf.queryExecution().toRdd().toDebugString()
                                     for f in written)
    lake = tmp_path / "lake" / "items"
    truncates = spark.read.format("delta").load(str(lake / "_cdc_truncates"))
    assert [r.asDict(recursive=True) for r in truncates.collect()] == [{
        SEQ_COLUMN: dict(text="", p1=30, p2=0, p3=0, stream=1, origin="", partition=0, offset=1, op_rank=4),
        TS_COLUMN: 3, "batch_id": 0}]
    counts = spark.read.format("delta").load(str(lake / "_cdc_toast_unresolved"))
    assert [tuple(r) for r in counts.collect()] == [(1, "note", 1)]
    assert all(f.nullable for f in counts.schema.fields)


def test_snapshot_ranks_below_streaming_at_same_position(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [
        PG.event("u", None, row(1, "streamed"), 50, 2),
        PG.event("r", None, row(1, "snapshot"), 50, 1, snapshot=True),   # later offset, same position
    ]), 0)
    assert table_rows(spark, config, "items") == [row(1, "streamed")]


def test_late_duplicates_and_tombstones(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "v1"), 100, 1), PG.event("u", None, row(1, "v2"), 200, 2),
                                PG.event("c", None, row(2, "keep"), 210, 2)]), 0)
    # a connector restart re-sends old events with new offsets: nothing changes
    report, _ = h.process(raw_batch(spark, [PG.event("c", None, row(1, "v1"), 100, 1)], first_offset=3), 1)
    assert table_rows(spark, config, "items") == [row(1, "v2"), row(2, "keep")]
    assert report.skipped == 1
    h.process(raw_batch(spark, [PG.event("d", row(1), None, 300, 3)], first_offset=4), 2)
    # an older update after the delete does not revive the row; a newer insert does
    h.process(raw_batch(spark, [PG.event("u", None, row(1, "stale"), 250, 2)], first_offset=5), 3)
    assert table_rows(spark, config, "items") == [row(2, "keep")]
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "back"), 400, 4)], first_offset=6), 4)
    assert table_rows(spark, config, "items") == [row(1, "back"), row(2, "keep")]


def test_a_restarted_run_reads_the_guard_bounds_its_predecessor_wrote(spark, tmp_path):
    """A new process's first batch skips the companion tables only while they are as created;
    after a delete and a truncate were written, a late change older than either stays out."""
    config, first = setup(spark, tmp_path, truncate="apply")
    first.process(raw_batch(spark, [PG.event("c", None, row(1, "v1"), 100, 1),
                                    PG.event("c", None, row(2, "two"), 110, 1)]), 0)
    first.process(raw_batch(spark, [PG.event("d", row(1), None, 300, 3)], first_offset=2), 1)
    restarted = handler(spark, config)
    restarted.process(raw_batch(spark, [PG.event("u", None, row(1, "stale"), 250, 2)], first_offset=3), 2)
    assert table_rows(spark, config, "items") == [row(2, "two")]
    restarted.process(raw_batch(spark, [PG.truncate(400, 4)], first_offset=4), 3)
    again = handler(spark, config)
    again.process(raw_batch(spark, [PG.event("u", None, row(2, "before the truncate"), 350, 3),
                                    PG.event("c", None, row(3, "after"), 500, 5)], first_offset=5), 4)
    assert table_rows(spark, config, "items") == [row(3, "after")]


def test_late_changes_stay_out_whether_their_tombstone_is_held_or_read_again(spark, tmp_path):
    """The run holds its last batches' tombstones for the guard; a change older than a tombstone
    of a batch no longer held is checked against the tombstone table."""
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(i), i, 1) for i in range(1, 12)]), 0)
    deleting = range(1, KEEP_BATCHES + 2)
    for i in deleting:
        h.process(raw_batch(spark, [PG.event("d", row(i), None, 100 * i, 2)], first_offset=100 + i), i)
    assert h.table_sinks("items")[0].recent.floor is not None      # the first batches' are no longer held
    newest_deleted = deleting[-1]
    late = [(newest_deleted, 100 * newest_deleted - 50), (1, 50)]   # a held tombstone, then one read again
    for n, (i, lsn) in enumerate(late):
        report, _ = h.process(raw_batch(spark, [PG.event("u", None, row(i, "late"), lsn, 3),
                                                PG.event("u", None, row(11, f"v{n}"), 5000 + n, 3)],
                                        first_offset=200 + 2 * n), 20 + n)
        assert report.skipped == 1
    assert table_rows(spark, config, "items") == [row(10), row(11, "v1")]


# a key column of every type a config may declare, at its edges
EVERY_KEY_TYPE = ("b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, f float, d double, s string, "
                  "bin binary, day date, ts timestamp, ntz timestamp_ntz, dec decimal(38,10)")
LAST_MICROSECOND = dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
KEY_EDGES = [
    (True, -128, -32768, -2**31, -2**63, float("nan"), -0.0, "", b"", dt.date(1, 1, 1),
     dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(1, 1, 1),
     Decimal("-9999999999999999999999999999.9999999999")),
    (False, 127, 32767, 2**31 - 1, 2**63 - 1, float("inf"), 5e-324, "ü\u0000\U0001F600", b"\x00\xff",
     dt.date(9999, 12, 31), LAST_MICROSECOND.replace(tzinfo=dt.timezone.utc), LAST_MICROSECOND,
     Decimal("0.0000000001")),
]


def test_held_tombstones_keep_every_key_type_exactly_and_start_no_python_worker(spark):
    """The guard's held copy of a batch's tombstones: every key type at its edges, the position
    and source time, as the batch had them; and read in the JVM (a Python RDD would start
    Python workers in every guard that reads it)."""
    position = dict(text=None, p1=2**63 - 1, p2=-1, p3=0, stream=1, origin="topic", partition=2, offset=7, op_rank=3)
    rows = [(*edges, position, -2**63 + n) for n, edges in enumerate(KEY_EDGES)]
    tombstones = spark.createDataFrame(rows, f"{EVERY_KEY_TYPE}, {SEQ_COLUMN} {SEQ_TYPE}, {TS_COLUMN} bigint")
    held = held_copy(tombstones)
    assert held.schema == tombstones.schema
    as_text = lambda frame: [r[0] for r in frame.select(F.to_json(F.struct("*"))).collect()]  # noqa: E731
    assert as_text(held) == as_text(tombstones)     # as text in the JVM: NaN, -0.0, year 1 (Python has no year 0)
    assert "PythonRDD" not in held._jdf.queryExecution().toRdd().toDebugString()


def test_delete_whose_tombstone_landed_without_its_merge_applies_on_replay(spark, tmp_path, monkeypatch):
    """The tombstone append and the MERGE commit side by side; a crash may keep either one."""
    from cdc_delta.sinks.current_state import merge as apply
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), PG.event("c", None, row(2), 11, 1)]), 0)
    delete = [PG.event("d", row(1), None, 20, 2), PG.event("u", None, row(2, "y"), 21, 2)]

    def crash(*args):
        raise RuntimeError("killed inside the MERGE")
    with monkeypatch.context() as m:
        m.setattr(apply, "_run_merge", crash)
        with pytest.raises(RuntimeError):
            h.process(raw_batch(spark, delete, first_offset=2), 1)
    tombstones = DeltaTable.forPath(spark, str(tmp_path / "lake" / "items" / "_cdc_tombstones")).toDF().collect()
    assert [t["id"] for t in tombstones] == [1]
    assert table_rows(spark, config, "items") == [row(1), row(2)]
    h.process(raw_batch(spark, delete, first_offset=2), 1)
    assert table_rows(spark, config, "items") == [row(2, "y")]


def test_batch_replayed_after_a_crash_changes_nothing(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    batch = [PG.event("c", None, row(1), 10, 1), PG.event("d", row(1), None, 20, 2),
             PG.event("c", None, row(2, "b"), 30, 3), "{broken"]
    h.process(raw_batch(spark, batch), 7)
    first = table_rows(spark, config, "items")
    h.process(raw_batch(spark, batch), 7)
    assert table_rows(spark, config, "items") == first == [row(2, "b")]
    assert len(quarantine_rows(spark, config)) == 1
    target = DeltaTable.forPath(spark, str(tmp_path / "lake" / "items"))
    meta = json.loads(target.history().filter("operation = 'MERGE'").orderBy("version").first()["userMetadata"])
    assert meta["batch_id"] == 7 and meta["pipeline"] == "t" and meta["offsets"] == {"t/0": 3}


@pytest.mark.parametrize("locked", [True, False], ids=["run-holds-the-lock", "users-own-stream"])
def test_a_replayed_batch_appends_its_tombstones_once(spark, tmp_path, locked):
    """Under the writer lock the append reads the table's log in the driver and is blind (no
    txn action: Delta need not rebuild the table's state); a user's own stream lets Delta check
    by txnAppId. Either way a replay adds nothing."""
    config = make_config(tmp_path, [items()])
    h = BatchHandler(spark, config, locked=locked)
    h.prepare()
    batch = [PG.event("c", None, row(1), 10, 1), PG.event("d", row(1), None, 20, 2)]
    for _ in range(2):
        h.process(raw_batch(spark, batch), 7)
    folder = tmp_path / "lake" / "items" / "_cdc_tombstones"
    tombstones = DeltaTable.forPath(spark, str(folder))
    assert [t["id"] for t in tombstones.toDF().collect()] == [1]
    [write] = tombstones.history().filter("operation = 'WRITE'").collect()
    actions = [json.loads(line) for line in (folder / "_delta_log" / f"{write['version']:020d}.json").open()]
    assert any("txn" in a for a in actions) is not locked


def test_many_tables_from_one_input(spark, tmp_path):
    other = EventWriter("mysql", "notes", {"k": "string", "v": "int"}, db="crm")
    config = make_config(tmp_path, [items(), {"name": "notes", "match": {"db": "crm", "table": "notes"},
                                              "keys": ["k"], "columns": {"k": "string", "v": "int"}}])
    h = handler(spark, config)
    report, _ = h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), other.event("c", None, {"k": "a", "v": 1}, 10, 1),
                                            other.event("u", None, {"k": "a", "v": 2}, 20, 1)]), 0)
    assert table_rows(spark, config, "items") == [row(1)]
    assert table_rows(spark, config, "notes") == [{"k": "a", "v": 2}]
    assert report.tables["notes"].inserted == 1 and report.skipped == 1


def test_schema_change_fail_policy(spark, tmp_path):
    config, h = setup(spark, tmp_path, schema_change="fail")
    wider = EventWriter("postgresql", "items", {**COLUMNS, "extra": "string"})
    with pytest.raises(SchemaChangeRefused) as info:
        h.process(raw_batch(spark, [wider.event("c", None, {**row(1), "extra": "e"}, 10, 1)]), 0)
    assert (info.value.table, info.value.column) == ("items", "extra")


def test_schema_change_ignore_policy(spark, tmp_path):
    config, h = setup(spark, tmp_path, schema_change="ignore")
    wider = EventWriter("postgresql", "items", {**COLUMNS, "extra": "string"})
    h.process(raw_batch(spark, [wider.event("c", None, {**row(1), "extra": "e"}, 10, 1)]), 0)
    assert table_rows(spark, config, "items") == [row(1)]


def test_a_column_added_between_batches_reaches_the_table(spark, tmp_path):
    """The second batch's changes are first built on the first batch's view (the usual case);
    its new column makes this batch's view differ, so they are built again on it."""
    config, h = setup(spark, tmp_path, schema_change="evolve")
    wider = EventWriter("postgresql", "items", {**COLUMNS, "extra": "string"})
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1)]), 0)
    report, _ = h.process(raw_batch(spark, [wider.event("c", None, {**row(2), "extra": "e"}, 20, 2),
                                            wider.event("u", None, {**row(1, n=1), "extra": "f"}, 21, 2)],
                                    first_offset=1), 1)
    assert table_rows(spark, config, "items") == [{**row(1, n=1), "extra": "f"}, {**row(2), "extra": "e"}]
    assert (report.tables["items"].inserted, report.tables["items"].updated) == (1, 1)


def test_tombstones_are_collected_by_source_time(spark, tmp_path):
    config, h = setup(spark, tmp_path, tombstone_retention="1 s")
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1_000), PG.event("d", row(1), None, 20, 2_000)]), 1)
    report, _ = h.process(raw_batch(spark, [PG.event("c", None, row(2), 30, 10_000)], first_offset=2), 10)
    assert report.tables["items"].tombstones_collected == 1


def test_a_new_pipelines_first_batch_leaves_its_tombstones_to_a_later_collection(spark, tmp_path):
    """Batch 0 of a new pipeline collects nothing (its tombstones table held nothing before
    it): the tombstone kept past its retention still rejects the older create delivered again,
    and the next collection (batch 10) forgets it."""
    config, h = setup(spark, tmp_path, tombstone_retention="1 s")
    create, delete = PG.event("c", None, row(1), 10, 1_000), PG.event("d", row(1), None, 20, 2_000)
    first, _ = h.process(raw_batch(spark, [create, delete, PG.event("c", None, row(2), 30, 10_000)]), 0)
    again, _ = h.process(raw_batch(spark, [create], first_offset=3), 1)
    tenth, _ = h.process(raw_batch(spark, [PG.event("c", None, row(3), 40, 11_000)], first_offset=4), 10)
    assert [r.tables["items"].tombstones_collected for r in (first, again, tenth)] == [0, 0, 1]
    assert (again.tables["items"].inserted, again.skipped) == (0, 1)
    assert table_rows(spark, config, "items") == [row(2), row(3)]


def test_replay_applies_quarantined_events_once_fixed(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    other = EventWriter("postgresql", "other", {"id": "bigint", "label": "string"})
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), other.event("c", None, {"id": 7, "label": "L"}, 11, 1)]), 0)
    (bad,) = quarantine_rows(spark, config)
    assert bad["reason"].startswith("no configured table matches topic 't', source shop.public.other")
    # the fix: declare the table, then replay what waited in quarantine
    fixed = make_config(tmp_path, [items(), {"name": "other", "match": {"table": "other"}, "keys": ["id"],
                                             "columns": {"id": "bigint", "label": "string"}}])
    message = replay_quarantine(spark, fixed)
    assert "1 applied or superseded, 0 still failing" in message
    assert table_rows(spark, fixed, "other") == [{"id": 7, "label": "L"}]
    (marked,) = quarantine_rows(spark, fixed)
    assert marked["replayed_batch"] is not None
    assert "nothing to replay" in replay_quarantine(spark, fixed)
    # a replay writes the tables, so it waits its turn like a second run
    with exclusive(fixed.target_of(fixed.tables[0]).path, "table items", "the service"):
        with pytest.raises(WriterBusy, match="table items is being written by another run"):
            replay_quarantine(spark, fixed)


def test_the_merge_asks_delta_to_skip_files_only_for_a_narrow_key_range(spark, tmp_path):
    """Keys across the table: no key condition (it would skip nothing and cost a pass); the
    newest keys only: the MERGE's condition bounds the stored keys it reads."""
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(i), 10 + i, 1) for i in range(1, 101)]), 0)
    h.process(raw_batch(spark, [PG.event("u", None, row(1, "a"), 200, 2),
                                PG.event("u", None, row(100, "b"), 201, 2)], first_offset=100), 1)
    h.process(raw_batch(spark, [PG.event("u", None, row(99, "c"), 300, 3),
                                PG.event("c", None, row(101, "d"), 301, 3)], first_offset=102), 2)
    target = DeltaTable.forPath(spark, str(tmp_path / "lake" / "items"))
    writes = target.history().filter("operation in ('WRITE', 'MERGE')").orderBy("version").collect()
    assert [w["operation"] for w in writes] == ["WRITE", "MERGE", "MERGE"]   # the first into an empty table
    bounded = [re.search(r">= (\d+)\) AND \(id#\d+L <= (\d+)", m["operationParameters"]["predicate"])
               for m in writes[1:]]
    assert [b and b.groups() for b in bounded] == [None, ("99", "101")]
    expected = {**{i: row(i) for i in range(1, 102)}, 1: row(1, "a"), 100: row(100, "b"), 99: row(99, "c"),
                101: row(101, "d")}
    assert table_rows(spark, config, "items") == [expected[i] for i in sorted(expected)]

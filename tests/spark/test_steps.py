"""Each step of steps/ on a tiny DataFrame: what it adds, keeps and drops, compared with chispa."""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from pyspark.sql import Row
from pyspark.sql import functions as F

from cdc_delta.config.models import Route
from cdc_delta.config.types import parse_sql_type
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER
from cdc_delta.frame import (END_AT, ERROR, IS_CURRENT, IS_TOMBSTONE, OFFSET, OP, SEQ_COLUMN, SEQ_TYPE, START_AT, TABLE,
                             TS_COLUMN, VALUE, VALUE_HASH, toast_column, unavailable)
from cdc_delta.infra.names import col
from cdc_delta.steps.changes import table_changes
from cdc_delta.steps.decode import decode
from cdc_delta.steps.guard import guard
from cdc_delta.steps.news import news
from cdc_delta.steps.reduce import reduce_to_last_change
from cdc_delta.steps.truncate_barrier import after_truncate
from cdc_delta.steps.versions import versions
from cdc_delta.steps.view import TableView
from devtools.encode import EventWriter

from .helpers import make_config, raw_batch

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string"}
PG = EventWriter("postgresql", "items", COLUMNS)
OTHER = EventWriter("postgresql", "other", COLUMNS)
SEQ_SCHEMA = f"id bigint, {SEQ_COLUMN} {SEQ_TYPE}"


def seq(n: int) -> Row:
    """A position that orders by n."""
    return Row(text=None, p1=n, p2=0, p3=0, stream=0, origin="", partition=0, offset=n, op_rank=0)


@pytest.fixture
def config(tmp_path):
    return make_config(tmp_path, [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}])


@pytest.fixture
def view(config):
    return TableView(config.tables[0], {c: parse_sql_type(t) for c, t in COLUMNS.items()}, {})


@pytest.mark.parametrize("quarantine_unmatched", [True, False])
def test_decode_routes_records_and_names_what_matches_no_table(spark, config, quarantine_unmatched):
    raw = raw_batch(spark, [PG.event("c", None, {"id": 1, "note": "a"}, 10, 1),
                            OTHER.event("c", None, {"id": 2, "note": "b"}, 11, 1), None, "not json"])
    decoded = decode(raw, list(config.tables), 1 << 20, quarantine_unmatched)
    got = decoded.select(OFFSET, TABLE, OP, IS_TOMBSTONE, F.substring(ERROR, 1, 40).alias("error"))
    unmatched = "no configured table matches topic 't', s" if quarantine_unmatched else None
    expected = spark.createDataFrame(
        [(0, "items", "c", False, None), (1, None, "c", False, unmatched), (2, None, None, True, None),
         (3, None, None, False, "malformed JSON: the value does not parse")],
        f"{OFFSET} bigint, {TABLE} string, {OP} string, {IS_TOMBSTONE} boolean, error string")
    assert_df_equality(got, expected, ignore_nullable=True, ignore_row_order=True)


def test_table_changes_type_the_image_order_by_position_and_give_the_first_reason(spark, config, view):
    events = [PG.event("u", None, {"id": 1, "note": "later"}, 30, 3),     # first by offset, last by position
              PG.event("c", None, {"id": 1, "note": "first"}, 10, 1),
              PG.event("d", {"id": 2}, None, 20, 2),
              PG.event("c", None, {"id": 3, "note": TOAST_PLACEHOLDER}, 40, 4),
              PG.event("c", None, {"note": "no key"}, 50, 5),
              OTHER.event("c", None, {"id": 9, "note": "elsewhere"}, 60, 6)]
    decoded = decode(raw_batch(spark, events), list(config.tables), 1 << 20, True)
    got = (table_changes(decoded, view).orderBy(SEQ_COLUMN)
           .select("id", "note", unavailable("note"), OP, ERROR, OFFSET))
    expected = spark.createDataFrame(
        [(1, "first", False, "c", None, 1), (2, None, False, "d", None, 2), (1, "later", False, "u", None, 0),
         (3, None, True, "c", None, 3), (None, "no key", False, "c", "key column 'id' is null or missing in 'after'", 4)],
        f"id bigint, note string, {unavailable('note')} boolean, {OP} string, {ERROR} string, {OFFSET} bigint")
    assert_df_equality(got, expected, ignore_nullable=True)



@pytest.mark.parametrize("route_format", [None, "row", "envelope"])
def test_table_changes_keep_the_raw_value_for_a_route_of_whole_events_and_the_hash_of_a_bad_change(
        spark, config, route_format):
    """The quarantine reads a bad change's value again by its hash (sinks/quarantine.py)."""
    events = [PG.event("c", None, {"id": 1, "note": "good"}, 10, 1), PG.event("c", None, {"id": "x"}, 20, 2)]
    spec = config.tables[0]
    if route_format:
        spec = spec.model_copy(update={"routes": [Route(name="r", topic="out", format=route_format)]})
    view = TableView(spec, {c: parse_sql_type(t) for c, t in COLUMNS.items()}, {})
    decoded = decode(raw_batch(spark, events), [spec], 1 << 20, True)
    got = {r[OFFSET]: (r[VALUE], r[VALUE_HASH]) for r in table_changes(decoded, view).select(
        OFFSET, F.col(VALUE).cast("string"), VALUE_HASH).collect()}
    bad_hash = spark.range(1).select(F.xxhash64(F.lit(events[1].encode()))).first()[0]
    forwarded = route_format == "envelope"
    assert got == {0: (events[0] if forwarded else None, None), 1: (events[1] if forwarded else None, bad_hash)}


def changes_frame(spark, rows):
    """Changes as table_changes gives them: (id, note, placeholder?, op, position)."""
    schema = (f"id bigint, note string, {unavailable('note')} boolean, {OP} string, {SEQ_COLUMN} {SEQ_TYPE}, "
              f"{TS_COLUMN} bigint")
    return spark.createDataFrame([(i, note, ph, op, seq(n), n) for i, note, ph, op, n in rows], schema)


def test_reduce_keeps_the_last_change_per_key_and_says_where_a_toast_value_came_from(spark, view):
    changes = changes_frame(spark, [
        (1, "a", False, "c", 1), (1, None, True, "u", 2),                           # answered by the create
        (2, "b", False, "c", 1), (2, None, False, "d", 2),                          # deleted
        (3, None, True, "u", 5),                                                    # nothing earlier in the batch
        (4, "x", False, "c", 1), (4, None, False, "d", 2), (4, None, True, "c", 3),  # a delete between
    ])
    got = reduce_to_last_change(changes, view).select("id", "note", OP, F.col(SEQ_COLUMN).p1.alias("at"),
                                                      col(toast_column("note")).alias("toast"))
    toast = "struct<seq:struct<p1:bigint>,known:boolean>"
    expected = spark.createDataFrame(
        [(1, "a", "u", 2, Row(seq=Row(p1=1), known=True)), (2, None, "d", 2, None),
         (3, None, "u", 5, Row(seq=None, known=False)), (4, None, "c", 3, Row(seq=Row(p1=2), known=False))],
        f"id bigint, note string, {OP} string, at bigint, toast {toast}")
    narrowed = got.withColumn("toast", F.when(F.col("toast").isNotNull(), F.struct(
        F.when(F.col("toast.seq").isNotNull(), F.struct(F.col("toast.seq.p1").alias("p1"))).alias("seq"),
        F.col("toast.known").alias("known"))))
    assert_df_equality(narrowed, expected, ignore_nullable=True, ignore_row_order=True)


def test_reduce_gives_no_donor_to_a_column_without_placeholders(spark, view):
    """With the batch's placeholder columns known, a column outside them takes the last
    change's value and has no `toast_column`: what the full reduce gives it, as it is."""
    changes = changes_frame(spark, [(1, "a", False, "c", 1), (1, "b", False, "u", 2), (2, None, False, "d", 3)])
    narrowed = reduce_to_last_change(changes, view, toasted=[])
    assert toast_column("note") not in narrowed.columns
    full = reduce_to_last_change(changes, view)
    assert full.filter(col(toast_column("note")).isNotNull()).count() == 0
    assert_df_equality(narrowed, full.drop(toast_column("note")), ignore_row_order=True)


def test_truncate_barrier_keeps_only_changes_after_the_truncate(spark):
    changes = spark.createDataFrame([(i, seq(i)) for i in (1, 2, 3)], SEQ_SCHEMA)
    assert_df_equality(after_truncate(changes, seq(2)), changes.filter("id = 3"))
    assert_df_equality(after_truncate(changes, None), changes)


def test_guard_drops_changes_older_than_their_keys_tombstone_or_the_truncate(spark):
    changes = spark.createDataFrame([(1, seq(3)), (2, seq(5)), (3, seq(4)), (4, seq(2)), (5, seq(6))], SEQ_SCHEMA)
    tombstones = spark.createDataFrame([(1, seq(4)), (2, seq(4)), (3, seq(4))], SEQ_SCHEMA)
    got = guard(changes, ["id"], tombstones, truncate=seq(2))
    # 1: its tombstone is newer; 3: a delete at its own tombstone's position passes; 4: not after the truncate
    expected = spark.createDataFrame([(2, seq(5)), (3, seq(4)), (5, seq(6))], SEQ_SCHEMA)
    assert_df_equality(got, expected, ignore_row_order=True)
    assert_df_equality(guard(changes, ["id"], None, None), changes)


def delivery(n: int, offset: int) -> Row:
    """Position n as read at `offset`: a redelivery keeps n and gets a new offset."""
    return Row(text=None, p1=n, p2=0, p3=0, stream=1, origin="", partition=0, offset=offset, op_rank=2)


def test_news_are_distinct_changes_newer_than_what_the_table_holds_and_its_truncate(spark):
    changes = spark.createDataFrame([
        (1, delivery(5, 0)), (1, delivery(5, 9)), (1, delivery(7, 1)),   # a duplicate counts once
        (2, delivery(3, 2)),                                            # not newer than its stored row
        (3, delivery(4, 3)),                                            # a redelivery of its tombstone
        (4, delivery(1, 4)),                                            # not after the truncate
        (5, delivery(8, 5))], SEQ_SCHEMA)
    held = spark.createDataFrame([(1, delivery(4, 0)), (2, delivery(3, 0)), (3, delivery(4, 0))], SEQ_SCHEMA)
    got = news(changes, ["id"], held, truncate=delivery(2, 99))
    expected = spark.createDataFrame([(1, delivery(5, 0)), (1, delivery(7, 1)), (5, delivery(8, 5))], SEQ_SCHEMA)
    assert_df_equality(got, expected, ignore_row_order=True)
    nothing_held = news(changes, ["id"], None, truncate=delivery(2, 99))      # a new table: nothing to read
    expected = spark.createDataFrame([(1, delivery(5, 0)), (1, delivery(7, 1)), (2, delivery(3, 2)),
                                      (3, delivery(4, 3)), (5, delivery(8, 5))], SEQ_SCHEMA)
    assert_df_equality(nothing_held, expected, ignore_row_order=True)


HISTORY_SCHEMA = f"id bigint, note string, {unavailable('note')} boolean, tag string, {unavailable('tag')} boolean, " \
                 f"{OP} string, {SEQ_COLUMN} {SEQ_TYPE}, {TS_COLUMN} bigint"


def test_versions_open_on_tracked_changes_change_in_place_otherwise_and_close_on_delete_or_truncate(spark):
    rows = [(1, "a", False, "x", False, "c", 1), (1, None, True, "y", False, "u", 2),    # untracked: in place
            (1, "b", False, "y", False, "u", 3), (1, None, False, None, False, "d", 4),  # tracked: a new version
            (1, None, True, "z", False, "c", 5),                                        # after a delete: no value
            (1, None, False, None, False, "t", 6),
            (2, "a", False, "x", False, "r", 2), (2, None, True, "x", True, "u", 7)]
    changes = spark.createDataFrame([(*r[:6], seq(r[6]), 1000 * r[6]) for r in rows], HISTORY_SCHEMA)
    got = versions(changes, ["id"], ["note", "tag"], tracked=["note"]).select(
        "id", "note", "tag", F.col(START_AT).position.p1.alias("start"), F.col(END_AT).position.p1.alias("end"),
        F.col(END_AT).source_ts.cast("long").alias("end_s"), IS_CURRENT)
    expected = spark.createDataFrame(
        [(1, "a", "y", 1, 3, 3, False), (1, "b", "y", 3, 4, 4, False), (1, None, "z", 5, 6, 6, False),
         (2, "a", "x", 2, None, None, True)],
        f"id bigint, note string, tag string, start bigint, end bigint, end_s bigint, {IS_CURRENT} boolean")
    assert_df_equality(got, expected, ignore_nullable=True, ignore_row_order=True)

"""Exact values, always: TOAST placeholders under redelivery and both replica identities, JSON
numbers as exact decimals, Bits, field names in another case, integers into booleans,
timestamps at the calendar's edges as the files store them, instants to the microsecond and
wall times in any session time zone. Each case but the files' storage once wrote a wrong value
without a word. Beside them, what exact TOAST costs: a MERGE reads no stored value that the
events answer themselves."""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading
from decimal import Decimal
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from cdc_delta import cli
from devtools.encode import EventWriter, decimal_b64, encode_value
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER
from cdc_delta.errors import ColumnNameClash
from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.ops.status import collect_status
from cdc_delta.sinks.current_state import merge as merge_step
from cdc_delta.sinks.current_state.plan import merge_plan

from .helpers import (TIMESTAMP_EDGES, handler, make_config, quarantine_rows, raw_batch, session_setting,
                      table_rows)
from .replay import write_config

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string", "n": "bigint"}
PG = EventWriter("postgresql", "items", COLUMNS)


def items(**overrides):
    return {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": dict(COLUMNS), **overrides}


def setup(spark, tmp_path, table=None, **extra):
    config = make_config(tmp_path, [table or items()], **extra)
    return config, handler(spark, config)


def row(i, note="x", n=0):
    return {"id": i, "note": note, "n": n}


# --- 1. TOAST carry only from a change the table accepts ---------------------------------------

@pytest.mark.parametrize("identity", ["default", "full"])
def test_toast_carry_skips_a_redelivered_change_older_than_the_stored_row(spark, tmp_path, identity):
    """The stored row holds 'fresh' (position 20); a connector restart re-sends the change at 10
    ('stale', new offset) before updates at 30 and 40 whose text is a placeholder."""
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "stale", 1), 10, 1),
                                PG.event("u", None, row(1, "fresh", 2), 20, 2)]), 0)
    before = None if identity == "default" else row(1, TOAST_PLACEHOLDER, 2)   # FULL, itself unavailable
    h.process(raw_batch(spark, [
        PG.event("c", None, row(1, "stale", 1), 10, 1),                        # re-sent, same position
        PG.event("u", before, row(1, TOAST_PLACEHOLDER, 3), 30, 3),
        PG.event("u", None, row(1, TOAST_PLACEHOLDER, 4), 40, 4),
    ], first_offset=2), 1)
    assert table_rows(spark, config, "items") == [row(1, "fresh", 4)]


def test_toast_carry_skips_a_change_older_than_a_tombstone(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "gone", 1), 10, 1), PG.event("d", row(1), None, 20, 2)]), 0)
    report, _ = h.process(raw_batch(spark, [
        PG.event("c", None, row(1, "gone", 1), 10, 1),                          # re-sent, before the delete
        PG.event("u", None, row(1, TOAST_PLACEHOLDER, 3), 30, 3),               # no value known after it
    ], first_offset=2), 1)
    assert table_rows(spark, config, "items") == [row(1, None, 3)]
    assert report.tables["items"].toast_unresolved == 1


def test_full_replica_identity_takes_the_events_own_before_value(spark, tmp_path):
    """Under REPLICA IDENTITY FULL the update's `before` holds the old value, also when the
    pipeline never saw the row."""
    config, h = setup(spark, tmp_path)
    report, _ = h.process(raw_batch(spark, [
        PG.event("u", row(1, "old text", 1), row(1, TOAST_PLACEHOLDER, 2), 30, 3),
        PG.event("u", row(2, None, 1), row(2, TOAST_PLACEHOLDER, 2), 31, 3),    # NULL is a value
    ]), 0)
    assert table_rows(spark, config, "items") == [row(1, "old text", 2), row(2, None, 2)]
    assert report.tables["items"].toast_unresolved == 0


def test_placeholders_the_events_before_answers_leave_the_stored_value_unread(spark, tmp_path, monkeypatch):
    """Under REPLICA IDENTITY FULL no placeholder is left for the MERGE to answer, so it has no
    TOAST CASE and Delta does not read the stored column (what that saves: README, Benchmarks)."""
    plans = []

    def planned(*args, **kwargs):
        plans.append(merge_plan(*args, **kwargs))
        return plans[-1]

    monkeypatch.setattr(merge_step, "merge_plan", planned)
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, "old text", 1), 10, 1)]), 0)
    h.process(raw_batch(spark, [PG.event("u", row(1, "old text", 1), row(1, TOAST_PLACEHOLDER, 2), 20, 2),
                                PG.event("c", None, row(2, "new", 1), 21, 2)], first_offset=1), 1)
    assert table_rows(spark, config, "items") == [row(1, "old text", 2), row(2, "new", 1)]
    assert [p.update_set["`note`"] for p in plans] == ["s.`note`"]


# --- 2. the placeholder never lands in a table -------------------------------------------------

def test_null_before_a_placeholder_is_carried_as_null(spark, tmp_path):
    config, h = setup(spark, tmp_path)
    h.process(raw_batch(spark, [PG.event("c", None, row(1, None, 1), 10, 1)]), 0)
    h.process(raw_batch(spark, [PG.event("u", None, row(1, TOAST_PLACEHOLDER, 2), 20, 2),
                                PG.event("c", None, row(2, None, 1), 21, 2),
                                PG.event("u", None, row(2, TOAST_PLACEHOLDER, 2), 22, 2)], first_offset=1), 1)
    assert table_rows(spark, config, "items") == [row(1, None, 2), row(2, None, 2)]


def test_placeholder_without_any_earlier_value_is_null_and_counted(spark, tmp_path):
    """A pipeline started late: the first change it sees of a key is an update whose text is
    unavailable. NULL is written, the batch counts it, and status shows it."""
    config, h = setup(spark, tmp_path)
    report, _ = h.process(raw_batch(spark, [PG.event("u", None, row(1, TOAST_PLACEHOLDER, 2), 20, 2),
                                            PG.event("u", None, row(2, TOAST_PLACEHOLDER, 2), 21, 2),
                                            PG.event("u", None, row(2, TOAST_PLACEHOLDER, 3), 22, 2)]), 0)
    assert table_rows(spark, config, "items") == [row(1, None, 2), row(2, None, 3)]
    assert report.tables["items"].toast_unresolved_columns == {"note": 2}
    assert "toast unresolved 2" in report.line()
    assert json.loads(report.as_json())["toast_unresolved"] == 2
    # the next batch supplies the value; a replay of the first batch counts nothing again
    h.process(raw_batch(spark, [PG.event("u", None, row(1, "known", 3), 30, 3)], first_offset=3), 1)
    again, _ = h.process(raw_batch(spark, [PG.event("u", None, row(1, TOAST_PLACEHOLDER, 2), 20, 2)], first_offset=4), 2)
    assert again.tables["items"].toast_unresolved == 0
    assert table_rows(spark, config, "items") == [row(1, "known", 3), row(2, None, 3)]
    assert collect_status(spark, config)["tables"]["items"]["toast_unresolved"] == 2


def test_the_toast_count_beside_the_merge_reads_the_version_the_merge_read(spark, tmp_path, monkeypatch):
    """The count runs beside the MERGE; made to start only once the MERGE has committed, it
    still counts against the table as the MERGE found it (the inserted keys had no row)."""
    from cdc_delta.sinks import current_state

    merged = threading.Event()
    merge, count = current_state.merge_changes, current_state.count_unresolved

    def merge_then_say_so(*args, **kwargs):
        figures = merge(*args, **kwargs)
        merged.set()
        return figures

    def count_once_merged(*args, **kwargs):
        assert merged.wait(120), "the count waited for a MERGE that never came"
        return count(*args, **kwargs)

    monkeypatch.setattr(current_state, "merge_changes", merge_then_say_so)
    monkeypatch.setattr(current_state, "count_unresolved", count_once_merged)
    config, h = setup(spark, tmp_path)
    report, _ = h.process(raw_batch(spark, [PG.event("u", None, row(1, TOAST_PLACEHOLDER, 2), 20, 2),
                                            PG.event("u", None, row(2, TOAST_PLACEHOLDER, 3), 22, 2)]), 0)
    assert table_rows(spark, config, "items") == [row(1, None, 2), row(2, None, 3)]
    assert report.tables["items"].toast_unresolved_columns == {"note": 2}


def test_binary_placeholder_is_not_stored_as_bytes(spark, tmp_path):
    columns = {"id": "bigint", "doc": "binary"}
    writer = EventWriter("postgresql", "items", columns)
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": columns})
    placeholder_b64 = base64.b64encode(TOAST_PLACEHOLDER.encode()).decode()
    h.process(raw_batch(spark, [writer.event("u", None, {"id": 1, "doc": placeholder_b64}, 20, 2)]), 0)
    assert table_rows(spark, config, "items") == [{"id": 1, "doc": None}]


# --- 3. JSON-number decimals are exact ----------------------------------------------------------

WIDE = {"id": "bigint", "label": "string", "amount": "decimal(38,10)", "big": "bigint", "price": "decimal(10,2)"}


def number_event(i, label, amount, big, price="1.50"):
    """Debezium with decimal.handling.mode=double/string sends decimals as JSON numbers; the
    numbers here are written as text so no Python float touches them."""
    after = f'{{"id":{i},"label":{label},"amount":{amount},"big":{big},"price":{price}}}'
    source = json.dumps({"connector": "postgresql", "lsn": 100 + i, "db": "shop", "schema": "public", "table": "items"})
    return f'{{"before":null,"after":{after},"op":"c","ts_ms":1,"source":{source}}}'


@pytest.mark.parametrize("handling", ["double", "precise"])
def test_json_number_decimals_and_integers_are_exact(spark, tmp_path, handling):
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": WIDE},
                      decoding={"decimal_handling": handling})
    h.process(raw_batch(spark, [
        number_event(1, "123456789876543212345678987654321.11", "2222222222222222300000001111.1234567890",
                     "9223372036854775807"),
        number_event(2, '"text"', "-0.0000000001", "-9223372036854775808", "0E-10"),
        number_event(3, '"x"', "1", "1", "1.005"),                     # 1.005 does not fit decimal(10,2)
    ]), 0)
    assert table_rows(spark, config, "items") == [
        {"id": 1, "label": "123456789876543212345678987654321.11", "amount": Decimal("2222222222222222300000001111.1234567890"),
         "big": 9223372036854775807, "price": Decimal("1.50")},
        {"id": 2, "label": "text", "amount": Decimal("-0.0000000001"), "big": -9223372036854775808, "price": Decimal("0.00")},
    ]
    (bad,) = quarantine_rows(spark, config)
    assert "column 'price': value '1.005' does not decode as decimal(10,2)" in bad["reason"]


# --- 4. Decimal schema with a JSON number value (JsonConverter decimal.format=NUMERIC) ------------

def wrapped_decimal_event(i, amount_json: str) -> str:
    field = {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
             "parameters": {"scale": "2", "connect.decimal.precision": "12"}, "field": "amount"}
    value = {"type": "struct", "optional": True, "fields": [{"type": "int64", "optional": False, "field": "id"}, field]}
    schema = {"type": "struct", "fields": [{**value, "field": "before"}, {**value, "field": "after"},
                                           {"type": "string", "field": "op"}]}
    source = json.dumps({"connector": "postgresql", "lsn": 100 + i, "db": "shop", "schema": "public", "table": "items"})
    payload = f'{{"before":null,"after":{{"id":{i},"amount":{amount_json}}},"op":"c","ts_ms":1,"source":{source}}}'
    return f'{{"schema":{json.dumps(schema)},"payload":{payload}}}'


def test_wrapped_decimal_as_json_number_or_base64_is_exact(spark, tmp_path):
    columns = {"id": "bigint", "amount": "decimal(12,2)"}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": columns})
    h.process(raw_batch(spark, [
        wrapped_decimal_event(1, "1234"),                                   # a number that is also base64 text
        wrapped_decimal_event(2, "-98765432.10"),
        wrapped_decimal_event(3, json.dumps(decimal_b64(Decimal("1234.00"), 2))),
        wrapped_decimal_event(4, "0.001"),                                  # more scale than the column
    ]), 0)
    assert table_rows(spark, config, "items") == [
        {"id": 1, "amount": Decimal("1234.00")}, {"id": 2, "amount": Decimal("-98765432.10")},
        {"id": 3, "amount": Decimal("1234.00")}]
    assert [q["offset"] for q in quarantine_rows(spark, config)] == [3]


# --- 5. Bits ------------------------------------------------------------------------------------

def bits_event(i, little_endian: bytes, wrapped: bool) -> str:
    b64 = base64.b64encode(little_endian).decode()
    source = {"connector": "mysql", "file": "mysql-bin.000001", "pos": 100 + i, "row": 0, "db": "shop", "table": "items"}
    payload = {"before": None, "after": {"id": i, "flags": b64, "mask": b64}, "op": "c", "ts_ms": 1, "source": source}
    if not wrapped:
        return json.dumps(payload)
    bits = lambda name, n: {"type": "bytes", "optional": True, "name": "io.debezium.data.Bits", "version": 1,  # noqa: E731
                            "parameters": {"length": str(n)}, "field": name}
    value = {"type": "struct", "optional": True, "fields": [{"type": "int64", "field": "id"}, bits("flags", 64),
                                                             bits("mask", 16)]}
    schema = {"type": "struct", "fields": [{**value, "field": "before"}, {**value, "field": "after"}]}
    return json.dumps({"schema": schema, "payload": payload})


@pytest.mark.parametrize("wrapped", [False, True])
def test_bits_are_decoded_big_endian(spark, tmp_path, wrapped):
    columns = {"id": "bigint", "flags": {"type": "binary", "encoding": "Bits"}, "mask": {"type": "bigint", "encoding": "Bits"}}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": columns})
    h.process(raw_batch(spark, [bits_event(1, bytes.fromhex("c707000000000000"), wrapped),
                                bits_event(2, bytes.fromhex("ff"), wrapped)]), 0)
    rows = table_rows(spark, config, "items")
    assert [(r["id"], bytes(r["flags"]).hex(), r["mask"]) for r in rows] == [
        (1, "00000000000007c7", 0x07c7), (2, "ff", 255)]


# --- 6. field names in another case -------------------------------------------------------------

UPPER = {"L_ORDERKEY": "bigint", "L_COMMENT": "string", "L_QTY": "decimal(10,2)"}


def test_upper_case_fields_fill_lower_case_columns(spark, tmp_path):
    lower = {c.lower(): t for c, t in UPPER.items()}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["l_orderkey"],
                                        "columns": lower})
    for wrapped in (False, True):
        writer = EventWriter("postgresql", "items", UPPER, wrapped=wrapped)
        h.process(raw_batch(spark, [
            writer.event("c", None, {"L_ORDERKEY": 1 + wrapped, "L_COMMENT": "hello", "L_QTY": Decimal("2.50")}, 10, 1),
            writer.event("u", None, {"L_ORDERKEY": 1 + wrapped, "L_COMMENT": TOAST_PLACEHOLDER, "L_QTY": Decimal("3.00")}, 11, 1),
        ]), int(wrapped))
    assert table_rows(spark, config, "items") == [
        {"l_orderkey": 1, "l_comment": "hello", "l_qty": Decimal("3.00")},
        {"l_orderkey": 2, "l_comment": "hello", "l_qty": Decimal("3.00")}]
    assert quarantine_rows(spark, config) == []


def test_fields_that_differ_only_by_case_are_refused_in_one_line(spark, tmp_path):
    event = PG.event("c", None, row(1), 10, 1).replace('"note":"x"', '"note":"x","NOTE":"y"')
    config, h = setup(spark, tmp_path)
    with pytest.raises(ColumnNameClash) as info:
        h.process(raw_batch(spark, [event]), 0)
    assert info.value.table == "items" and sorted(info.value.fields_seen) == ["NOTE", "note"]
    assert info.value.exit_code == 3


def test_cli_reports_a_clash_and_a_failed_batch_without_py4j(spark, tmp_path, capsys):
    """Through `cdc-delta run` (files source): the clash exits 3 in one line; a failure that is
    not ours (here the table's folder is a file) exits 5 with its cause, not a Python Proxy."""
    clash = PG.event("c", None, row(1), 10, 1).replace('"note":"x"', '"note":"x","NOTE":"y"')
    folder = tmp_path / "in" / "t"
    folder.mkdir(parents=True)
    (folder / "0.jsonl").write_text(clash + "\n")
    path = write_config(tmp_path, [items()])
    assert cli.main(["run", "--config", str(path)]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Python Proxy" not in err
    assert err.startswith("error: table items: events carry fields 'NOTE', 'note'")

    (folder / "0.jsonl").write_text(PG.event("u", None, row(2, TOAST_PLACEHOLDER), 10, 1) + "\n")
    (tmp_path / "lake" / "items" / "_cdc_toast_unresolved").write_text("in the way")
    assert cli.main(["run", "--config", str(path)]) == 5
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Python Proxy" not in err and "Py4J" not in err
    assert err.startswith("error: pipeline replay stopped: ") and "_cdc_toast_unresolved" in err


# --- 7. integers into a boolean column: one rule with and without the wrapper ---------------------

@pytest.mark.parametrize("wrapped", [False, True])
def test_int16_into_boolean(spark, tmp_path, wrapped):
    columns = {"id": "bigint", "flag": "boolean"}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": columns})
    writer = EventWriter("mysql", "items", {"id": "bigint", "flag": "smallint"}, wrapped=wrapped)
    h.process(raw_batch(spark, [writer.event("c", None, {"id": i, "flag": v}, 10 + i, 1) for i, v in enumerate([0, 1, 2])]), 0)
    assert table_rows(spark, config, "items") == [{"id": 0, "flag": False}, {"id": 1, "flag": True}]
    (bad,) = quarantine_rows(spark, config)
    assert "column 'flag': value '2' does not decode as boolean" in bad["reason"]


# --- 8. timestamps: Parquet's INT64 microseconds in the files, exact at the edges -----------------

TIMESTAMP_TYPE = "spark.sql.parquet.outputTimestampType"
INT64_MICROS, INT96 = ("INT64", "microseconds"), ("INT96", None)


def stored_micros(table) -> dict[int, int]:
    return {r["id"]: r["micros"] for r in table.select("id", F.unix_micros("at").alias("micros")).collect()}


def timestamp_storage(table) -> set[tuple]:
    """How the data files of the table's newest version store column `at`: Parquet's
    physical type, and the time unit of its logical type (INT96 has none)."""
    kinds = set()
    for file in table.inputFiles():
        (at,) = [c for c in pq.ParquetFile(unquote(urlparse(file).path)).schema if c.name == "at"]
        kinds.add((at.physical_type, json.loads(at.logical_type.to_json()).get("timeUnit")))
    return kinds


def test_timestamps_are_stored_as_int64_microseconds_and_exact_at_the_edges(spark, tmp_path):
    """A table written before the local session stored timestamps as INT64 microseconds holds
    INT96 files (Spark's default, which readers such as DataFusion take as nanoseconds). New
    rows land beside them in an INT64 file, and an update rewrites the old file as INT64: at
    each step every value is the source's microsecond, before the Gregorian switch and at year
    9999 too."""
    columns = {"id": "bigint", "at": "timestamp"}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": columns})
    writer = EventWriter("postgresql", "items", columns)
    table = lambda: DeltaLocation.of(config.target_of(config.tables[0])).read(spark)  # noqa: E731
    edges = {i: encode_value(at, "timestamp") for i, at in enumerate(TIMESTAMP_EDGES)}
    with session_setting(spark, TIMESTAMP_TYPE, "INT96"):
        h.process(raw_batch(spark, [writer.event("c", None, {"id": i, "at": at}, 10 + i, 1)
                                    for i, at in enumerate(TIMESTAMP_EDGES)]), 0)
    assert timestamp_storage(table()) == {INT96}

    new_keys = [writer.event("c", None, {"id": 100 + i, "at": at}, 100 + i, 2) for i, at in enumerate(TIMESTAMP_EDGES)]
    h.process(raw_batch(spark, new_keys, first_offset=100), 1)
    assert timestamp_storage(table()) == {INT96, INT64_MICROS}
    assert stored_micros(table()) == {**edges, **{100 + i: m for i, m in edges.items()}}

    moved = TIMESTAMP_EDGES[1:] + TIMESTAMP_EDGES[:1]
    h.process(raw_batch(spark, [writer.event("u", None, {"id": i, "at": at}, 200 + i, 3)
                                for i, at in enumerate(moved)], first_offset=200), 2)
    assert timestamp_storage(table()) == {INT64_MICROS}
    assert stored_micros(table()) == {**{i: encode_value(at, "timestamp") for i, at in enumerate(moved)},
                                      **{100 + i: m for i, m in edges.items()}}


# --- 9. instants: to the microsecond, whatever the session's time zone ---------------------------

def test_a_part_of_a_microsecond_is_quarantined_and_wall_times_are_utc_in_any_session_zone(spark, tmp_path):
    """SQL Server's datetime2(7) and Oracle's TIMESTAMP(9) reach Debezium as NanoTimestamp, or
    ZonedTimestamp text of 7 to 9 digits of fraction: a part of a microsecond, which no Spark
    timestamp holds, quarantines its event (it was dropped without a word). A `timestamp_ntz`
    column holds the instant's UTC wall time on a session set to another time zone, such as a
    notebook's own (it held the session's wall time, four hours early in New York)."""
    columns = {"id": "bigint", "at": "timestamp", "wall": "timestamp_ntz"}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": columns})
    nanos, zoned = (EventWriter("postgresql", "items", columns, wrapped=True, encodings={"at": e, "wall": e})
                    for e in ("NanoTimestamp", "ZonedTimestamp"))
    whole = 1529501823123456000        # 2018-06-20 13:37:03.123456 UTC
    events = [nanos.event("c", None, {"id": 1, "at": whole, "wall": whole}, 10, 1),
              nanos.event("c", None, {"id": 2, "at": whole + 789, "wall": whole}, 11, 1),
              zoned.event("c", None, {"id": 3, "at": "2018-06-20T15:37:03.123456+02:00",
                                      "wall": "2018-06-20T09:37:03.1234560-04:00"}, 12, 1),
              zoned.event("c", None, {"id": 4, "at": "2018-06-20T13:37:03Z", "wall": "2018-06-20T13:37:03.123456789Z"}, 13, 1)]
    with session_setting(spark, "spark.sql.session.timeZone", "America/New_York"):
        h.process(raw_batch(spark, events), 0)
    instant = dt.datetime(2018, 6, 20, 13, 37, 3, 123456)    # collected on the tests' UTC session
    assert table_rows(spark, config, "items") == [{"id": 1, "at": instant, "wall": instant},
                                                  {"id": 3, "at": instant, "wall": instant}]
    assert [r["reason"] for r in quarantine_rows(spark, config)] == [
        "column 'at': value '1529501823123456789' does not decode as timestamp",
        "column 'wall': value '2018-06-20T13:37:03.123456789Z' does not decode as timestamp_ntz"]


def test_a_wall_time_orders_changes_as_its_clock_does_in_any_session_zone(spark, tmp_path):
    """`sequence_by` a `timestamp_ntz` column on a session in New York: 02:30 on the morning
    clocks sprang forward is earlier than 03:15, though read as New York time (an hour that did
    not exist there) it came later, and the older change won."""
    columns = {"id": "bigint", "note": "string", "changed": "timestamp_ntz"}
    config, h = setup(spark, tmp_path, {"name": "items", "match": {"table": "items"}, "keys": ["id"],
                                        "columns": columns, "sequence_by": ["after.changed"]})
    writer = EventWriter("postgresql", "items", columns)
    at = lambda hour, minute: dt.datetime(2026, 3, 8, hour, minute)  # noqa: E731
    events = [writer.event("u", None, {"id": 1, "note": "older", "changed": at(2, 30)}, 10, 1),
              writer.event("u", None, {"id": 1, "note": "newer", "changed": at(3, 15)}, 11, 1)]
    with session_setting(spark, "spark.sql.session.timeZone", "America/New_York"):
        h.process(raw_batch(spark, events), 0)
    assert table_rows(spark, config, "items") == [{"id": 1, "note": "newer", "changed": at(3, 15)}]

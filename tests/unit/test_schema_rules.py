from __future__ import annotations

import json

import pytest

from cdc_delta.config.types import parse_sql_type
from cdc_delta.debezium.connect_schema import FieldInfo, image_fields, infer_json_type, lossless
from cdc_delta.sinks.current_state.plan import merge_plan
from cdc_delta.lake.tables import quote


@pytest.mark.parametrize("event,table,ok", [
    (FieldInfo("int32", None), "bigint", True),
    (FieldInfo("int64", None), "string", True),
    (FieldInfo("string", None), "bigint", False),
    (FieldInfo("double", None), "bigint", False),
    (FieldInfo("bytes", "Decimal", 2, 10), "decimal(10,2)", True),
    (FieldInfo("int64", "MicroTimestamp"), "timestamp", True),
    (FieldInfo("int64", "MicroTimestamp"), "date", False),
    (FieldInfo("string", "ZonedTimestamp"), "timestamp", True),
    (FieldInfo("int32", "Date"), "timestamp_ntz", True),
    (FieldInfo("string", "Json"), "string", True),
    (FieldInfo("boolean", None), "int", False),
])
def test_lossless(event, table, ok):
    assert lossless(event, parse_sql_type(table)) is ok


def test_image_fields_reads_logical_types():
    schema = {"type": "struct", "fields": [
        {"field": "before", "type": "struct", "fields": []},
        {"field": "after", "type": "struct", "fields": [
            {"field": "id", "type": "int32"},
            {"field": "amount", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
             "parameters": {"scale": "2", "connect.decimal.precision": "12"}},
            {"field": "at", "type": "int64", "name": "io.debezium.time.NanoTimestamp"}]}]}
    fields = image_fields(json.dumps(schema))
    assert fields["id"] == FieldInfo("int32", None)
    assert fields["amount"] == FieldInfo("bytes", "Decimal", 2, 12)
    assert fields["amount"].evolved_type() == "decimal(12,2)"
    assert fields["at"].evolved_type() == "timestamp"
    assert fields["id"].evolved_type() == "bigint"
    assert image_fields("not json") == {}


@pytest.mark.parametrize("values,expected", [
    (["1", "-2"], "bigint"), (["1", "2.5"], "double"), (["true", "false"], "boolean"),
    (["Beijing", None], "string"), ([None], "string"), (["99999999999999999999"], "decimal(38,0)"), (["1" * 39], "double"),
])
def test_infer_json_type(values, expected):
    assert infer_json_type(values) == expected


def test_merge_plan_guards_and_keeps_toast_values():
    plan = merge_plan(["id"], ["note"])
    assert plan.on == "t.`id` = s.`id`"
    assert "s._cdc_seq > t._cdc_seq" in plan.delete_when and "s._cdc_op = 'd'" in plan.delete_when
    assert plan.update_set["`note`"] == ("CASE WHEN s.`_cdc_toast_note` IS NOT NULL AND (s.`_cdc_toast_note`.seq IS NULL "
                                         "OR s.`_cdc_toast_note`.seq <= t._cdc_seq) THEN t.`note` ELSE s.`note` END")
    assert plan.insert_when == "s._cdc_op <> 'd'"
    assert set(plan.insert_values) == {"`id`", "`note`", "`_cdc_seq`", "`_cdc_source_ts`"}


def test_only_columns_that_may_hold_a_placeholder_get_the_toast_case():
    plan = merge_plan(["id"], ["note", "qty"], toasted=["note"])
    assert plan.update_set["`note`"].startswith("CASE WHEN s.`_cdc_toast_note` IS NOT NULL")
    assert plan.update_set["`qty`"] == "s.`qty`"
    assert merge_plan(["id"], ["note", "qty"], toasted=[]).update_set["`note`"] == "s.`note`"


def test_the_merge_reads_only_stored_rows_within_the_key_range_of_the_changes():
    plan = merge_plan(["id", "region"], ["note"], (17, 4096))
    assert plan.on == "t.`id` = s.`id` AND t.`region` = s.`region` AND t.`id` BETWEEN 17 AND 4096"


def test_identifiers_are_quoted():
    assert quote("select") == "`select`" and quote("a b") == "`a b`" and quote("x`y") == "`x``y`"
    plan = merge_plan(["a b", "x`y"], ["select"])
    assert plan.on == "t.`a b` = s.`a b` AND t.`x``y` = s.`x``y`"
    assert plan.update_set["`select`"].endswith("THEN t.`select` ELSE s.`select` END")

"""Event field names against declared columns, under Spark's case rule; one-line causes."""

from __future__ import annotations

import pytest

from cdc_delta.errors import ColumnNameClash, one_line
from cdc_delta.batch.field_names import FieldNames


def test_case_insensitive_by_default():
    names = FieldNames()
    assert names.spellings(["L_ORDERKEY", "l_comment", "L_COMMENT"], ["l_orderkey", "l_comment", "other"]) == {
        "l_orderkey": ("L_ORDERKEY",), "l_comment": ("l_comment", "L_COMMENT")}
    assert names.new_fields(["L_NEW", "l_new", "L_ORDERKEY"], ["l_orderkey"]) == ["L_NEW"]
    assert names.among("ID", ["id"])


def test_case_sensitive_keeps_names_apart():
    names = FieldNames(case_sensitive=True)
    assert names.spellings(["L_ORDERKEY"], ["l_orderkey"]) == {}
    assert names.new_fields(["L_ORDERKEY"], ["l_orderkey"]) == ["L_ORDERKEY"]
    names.refuse_clashes("t", [["NOTE", "note"]])   # two columns here: no error


def test_a_clash_in_one_event_names_table_and_fields():
    FieldNames().refuse_clashes("items", [["ID", "v"], ["id", "v"]])   # two events, one spelling each
    with pytest.raises(ColumnNameClash) as info:
        FieldNames().refuse_clashes("items", [["Id", "v"], ["NOTE", "id", "note"]])
    assert (info.value.table, info.value.fields_seen, info.value.exit_code) == ("items", ["NOTE", "note"], 3)
    assert "\n" not in str(info.value) and "spark.sql.caseSensitive" in str(info.value)


def test_one_line_drops_py4j_header_and_java_stack():
    py4j = Exception("An error occurred while calling o87.sql.\n: org.apache.spark.sql.AnalysisException: "
                     "[DELTA_DUPLICATE_COLUMNS_FOUND] Found duplicate column(s)\n\tat org.apache.spark.Foo")
    assert one_line(py4j) == "org.apache.spark.sql.AnalysisException: [DELTA_DUPLICATE_COLUMNS_FOUND] Found duplicate column(s)"
    assert one_line(ValueError("")) == "ValueError"

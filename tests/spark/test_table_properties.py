"""A table's `table_properties` on a table that existed before the run (lake/tables.py:
configure): set once, with a note; a restart with the same config changes nothing; a property
Delta refuses is a one-line error that names the table and the property."""

from __future__ import annotations

import pytest

from cdc_delta.errors import TablePropertiesRefused
from cdc_delta.lake.tables import DeltaLocation, table_properties

from .helpers import handler, make_config

pytestmark = pytest.mark.spark
DV = "delta.enableDeletionVectors"


def items(**overrides):
    return {"name": "items", "match": {"table": "items"}, "keys": ["id"],
            "columns": {"id": "bigint", "note": "string"}, **overrides}


def history(**overrides):
    return {"name": "items_history", "from": "items", "stored_as": "scd2", **overrides}


def location(tmp_path, name: str) -> DeltaLocation:
    return DeltaLocation(path=str(tmp_path / "lake" / name))


def version(spark, where: DeltaLocation) -> int:
    return where.table(spark).history(1).first()["version"]


def test_properties_added_to_the_config_are_set_on_existing_tables_once(spark, tmp_path, capsys):
    handler(spark, make_config(tmp_path, [items(), history()]))
    tables = [location(tmp_path, n) for n in ("items", "items_history")]
    created = [version(spark, t) for t in tables]
    # a new current-state table has deletion vectors (lake/deletion_vectors.py), a history table not
    assert [table_properties(spark, t).get(DV) for t in tables] == ["true", None]
    capsys.readouterr()

    changed = make_config(tmp_path, [items(table_properties={DV: "false"}), history(table_properties={DV: "true"})])
    handler(spark, changed)
    assert [table_properties(spark, t).get(DV) for t in tables] == ["false", "true"]
    assert [version(spark, t) for t in tables] == [v + 1 for v in created]
    assert [t.table(spark).history(1).first()["operation"] for t in tables] == ["SET TBLPROPERTIES"] * 2
    out = capsys.readouterr().out
    assert f"note: table items: set {DV} = false" in out and f"note: table items_history: set {DV} = true" in out

    handler(spark, changed)                      # a restart: nothing to set, no commit, no note
    assert [version(spark, t) for t in tables] == [v + 1 for v in created]
    assert "note: table" not in capsys.readouterr().out


def test_a_value_that_differs_only_by_case_is_not_set_again(spark, tmp_path):
    handler(spark, make_config(tmp_path, [items(table_properties={DV: "true"})]))
    where = location(tmp_path, "items")
    created = version(spark, where)
    handler(spark, make_config(tmp_path, [items(table_properties={DV: "TRUE"})]))
    assert version(spark, where) == created


def test_a_property_delta_refuses_names_the_table_and_the_property(spark, tmp_path):
    handler(spark, make_config(tmp_path, [items()]))
    where = location(tmp_path, "items")
    created = version(spark, where)
    with pytest.raises(TablePropertiesRefused) as refused:
        handler(spark, make_config(tmp_path, [items(table_properties={"delta.noSuchProperty": "1"})]))
    error = refused.value
    assert (error.table, error.properties) == ("items", {"delta.noSuchProperty": "1"})
    assert "\n" not in str(error) and "delta.noSuchProperty" in error.reason
    assert version(spark, where) == created

"""Acceptance: the shared fixtures replayed through `cdc-delta run` give the asserted tables."""

from __future__ import annotations

import pytest

from ..conftest import FIXTURES, read_jsonl
from .helpers import quarantine_rows, table_rows
from .replay import batches, config_of, products_table, run, stage, write_config

pytestmark = pytest.mark.spark

FLINK = FIXTURES / "flink"
PAIMON = FIXTURES / "paimon" / "table"
EXPECTED = FIXTURES / "expected"


def assert_same_rows(actual: list[dict], expected: list[dict]) -> None:
    """Row by row, value by value, including the Python type of each value."""
    assert len(actual) == len(expected), f"{len(actual)} rows, expected {len(expected)}"
    for got, want in zip(actual, expected):
        assert got == want
        for column, value in want.items():
            assert type(got[column]) is type(value), f"{column}: {type(got[column])} vs {type(value)}"


@pytest.mark.parametrize("name,expected", [
    ("debezium-data-schema-exclude.txt", "flink-mysql-products.final.jsonl"),
    ("debezium-data-schema-include.txt", "flink-mysql-products.final.jsonl"),
    ("debezium-postgres-data-schema-exclude.txt", "flink-postgres-products.final.jsonl"),
    ("debezium-postgres-data-schema-include.txt", "flink-postgres-products.final.jsonl"),
])
def test_flink_products(spark, tmp_path, name, expected):
    stage(tmp_path, [FLINK / name])
    config = write_config(tmp_path, [products_table()])
    assert run(config) == 0
    assert_same_rows(table_rows(spark, config_of(config), "products"), read_jsonl(EXPECTED / expected))
    assert quarantine_rows(spark, config_of(config)) == []


def test_replica_identity_delete_is_quarantined(spark, tmp_path):
    stage(tmp_path, [FLINK / "debezium-postgres-data-replica-identity.txt"])
    config = write_config(tmp_path, [products_table()])
    assert run(config) == 0
    rows = table_rows(spark, config_of(config), "products")
    assert [r["id"] for r in rows] == list(range(101, 112))  # 111's delete could not apply
    assert rows[-1] == {"id": 111, "name": "scooter", "description": "Big 2-wheel scooter ", "weight": 5.17}
    (bad,) = quarantine_rows(spark, config_of(config))
    assert "REPLICA IDENTITY" in bad["reason"] and bad["table"] == "products"
    assert bad["offset"] == 15 and b'"op":"d"' in bytes(bad["value"])
    (figures,) = batches(config)
    assert figures["quarantined"] == 1 and figures["records_in"] == 16


def test_paimon_schemaless_evolution(spark, tmp_path):
    stage(tmp_path, [PAIMON / "schemaevolution" / f"debezium-data-{i}.txt" for i in (1, 2, 3)])
    config = write_config(tmp_path, [products_table(match={"table": "product"})])
    assert run(config) == 0
    assert_same_rows(table_rows(spark, config_of(config), "products"),
                     read_jsonl(EXPECTED / "paimon-schemaevolution.final.jsonl"))
    schema = {f.name: f.dataType.simpleString() for f in spark.read.format("delta").load(str(tmp_path / "lake" / "products")).schema}
    assert schema["age"] == "bigint" and schema["address"] == "string"


def test_paimon_schema_include_evolution_then_refused_type_change(spark, tmp_path, capsys):
    folder = PAIMON / "schema" / "schemaevolution"
    stage(tmp_path, [folder / f"debezium-data-{i}.txt" for i in (1, 2, 3, 4)])
    config = write_config(tmp_path, [products_table(match={"table": "product"})])
    assert run(config) == 0
    expected = read_jsonl(EXPECTED / "paimon-schema-include-schemaevolution.final.jsonl")
    assert_same_rows(table_rows(spark, config_of(config), "products"), expected)

    stage(tmp_path, [folder / "debezium-data-5.txt"], topic="topic1")
    capsys.readouterr()
    assert run(config) == 3
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "table products" in err and "column age" in err and "bigint" in err and "string" in err
    assert_same_rows(table_rows(spark, config_of(config), "products"), expected)


def test_paimon_kafka_tombstone_between_files(spark, tmp_path):
    folder = PAIMON / "nullvalue"
    stage(tmp_path, [folder / "debezium-data-1.txt", folder / "debezium-data-2.txt"], extra_lines={0: ["null"]})
    config = write_config(tmp_path, [{"name": "t", "match": {"table": "test"}, "keys": ["id"],
                                      "columns": {"id": "int", "value": "string"}}])
    assert run(config) == 0
    assert table_rows(spark, config_of(config), "t") == [{"id": 1, "value": "A"}, {"id": 2, "value": "B"}]
    (figures,) = batches(config)
    assert figures["kafka_tombstones"] == 1 and figures["records_in"] == 3 and figures["quarantined"] == 0


CUSTOMERS = {"id": "int", "first_name": "string", "last_name": "string", "email": "string"}
ANNE = {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}


@pytest.mark.parametrize("name,policy,extra", [
    ("serde-with-schema.json", "fail", {}),
    ("serde-without-schema.json", "fail", {}),
    ("serde-update.json", "fail", {}),
    ("serde-unknown-property.json", "ignore", {}),
    ("serde-unknown-property.json", "evolve", {"middle_name": "L"}),
])
def test_debezium_single_events(spark, tmp_path, name, policy, extra):
    stage(tmp_path, [FIXTURES / "debezium" / name])
    config = write_config(tmp_path, [{"name": "customers", "match": {"db": "inventory", "table": "customers"},
                                      "keys": ["id"], "columns": CUSTOMERS, "schema_change": policy}])
    assert run(config) == 0
    assert table_rows(spark, config_of(config), "customers") == [{**ANNE, **extra}]

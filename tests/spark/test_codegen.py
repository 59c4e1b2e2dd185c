"""A batch's expressions run interpreted (and its queries not adaptively) below a number of
records into small tables, compiled otherwise, and adaptively only into large tables; a session
that does not ask for it is left as it is."""

from __future__ import annotations

import pytest

from cdc_delta.batch import codegen as codegen_module
from cdc_delta.batch.codegen import (ADAPTIVE, FACTORY_MODE, INTERPRET_BELOW, SMALL_TABLES_BYTES, WHOLE_STAGE,
                                     Codegen)
from cdc_delta.batch.planned import planned_records
from cdc_delta.errors import ConfigError
from cdc_delta.lake.tables import DeltaLocation

pytestmark = pytest.mark.spark


@pytest.fixture
def setting(spark):
    before = {k: spark.conf.get(k) for k in (INTERPRET_BELOW, FACTORY_MODE, WHOLE_STAGE, ADAPTIVE)}
    yield lambda value: spark.conf.set(INTERPRET_BELOW, value)
    for key, value in before.items():
        spark.conf.set(key, value)


def modes(spark) -> tuple[str, str, str]:
    return spark.conf.get(FACTORY_MODE), spark.conf.get(WHOLE_STAGE), spark.conf.get(ADAPTIVE)


def table_of(spark, folder, rows: int) -> DeltaLocation:
    spark.range(rows).selectExpr("id", "uuid() AS text").coalesce(1).write.format("delta").save(str(folder))
    return DeltaLocation(path=str(folder))


def test_small_batches_into_small_tables_interpreted_others_compiled(spark, setting, tmp_path):
    setting("100")
    tables = [table_of(spark, tmp_path / "a", 10)]
    stream = spark.newSession()     # a stream's batches come in a copy of the session
    codegen = Codegen(spark, lambda: tables)
    assert modes(spark) == ("NO_CODEGEN", "false", "false")      # before the first batch is counted
    codegen.fit(100, stream)      # compiled, not adaptively: the tables are under ADAPTIVE_FROM_BYTES
    assert modes(spark) == modes(stream) == ("FALLBACK", "true", "false") and not codegen.interpreted
    codegen.fit(99, stream)
    assert modes(spark) == modes(stream) == ("NO_CODEGEN", "false", "false") and codegen.interpreted
    tables.append(table_of(spark, tmp_path / "b", 200_000))
    assert sum(f.stat().st_size for f in (tmp_path / "b").rglob("*.parquet")) >= SMALL_TABLES_BYTES
    codegen.fit(99, stream)
    assert modes(spark) == modes(stream) == ("FALLBACK", "true", "false") and not codegen.interpreted
    spark.range(10).selectExpr("id", "'x' AS text").write.format("delta").mode("overwrite").save(str(tmp_path / "b"))
    codegen.fit(99, stream)       # the old version's files stay in the folder: not read, not counted
    assert modes(spark) == modes(stream) == ("NO_CODEGEN", "false", "false") and codegen.interpreted
    tables[1] = DeltaLocation(path=str(tmp_path / "not-created-yet"))
    codegen.fit(99, stream)
    assert codegen.interpreted
    tables[1] = DeltaLocation(path="s3a://bucket/lake/items")      # not on this disk: compiled, adaptively
    codegen.fit(99, stream)
    assert modes(spark) == modes(stream) == ("FALLBACK", "true", "true") and not codegen.interpreted


def test_compiled_batches_run_adaptively_from_a_size_of_their_tables(spark, setting, tmp_path, monkeypatch):
    setting("100")
    tables = [table_of(spark, tmp_path / "a", 1000), DeltaLocation(path=str(tmp_path / "not-created-yet"))]
    size = spark.sql(f"DESCRIBE DETAIL delta.`{tmp_path / 'a'}`").first()["sizeInBytes"]
    assert tables[0].stored_bytes() == size > 0 and tables[1].stored_bytes() == 0
    codegen = Codegen(spark, lambda: tables)
    monkeypatch.setattr(codegen_module, "ADAPTIVE_FROM_BYTES", size + 1)
    codegen.fit(1000, spark)
    assert modes(spark) == ("FALLBACK", "true", "false")
    monkeypatch.setattr(codegen_module, "ADAPTIVE_FROM_BYTES", size)
    codegen.fit(1000, spark)
    assert modes(spark) == ("FALLBACK", "true", "true")
    monkeypatch.setattr(codegen_module, "ADAPTIVE_FROM_BYTES", size + 1)
    for checksum in (tmp_path / "a" / "_delta_log").glob("*.crc"):    # a size not known: adaptively
        checksum.unlink()
    codegen.fit(1000, spark)
    assert tables[0].stored_bytes() is None and modes(spark) == ("FALLBACK", "true", "true")


def test_a_stream_started_before_the_switch_is_switched_too(spark, setting, tmp_path):
    setting("100")
    codegen = Codegen(spark, lambda: [])
    stream = spark.newSession()     # its settings: those it was copied with, not interpreted
    codegen.fit(10, stream)
    assert modes(stream) == ("NO_CODEGEN", "false", "false")


def test_a_session_without_the_setting_is_left_as_it_is(spark, setting):
    setting("0")
    spark.conf.set(FACTORY_MODE, "FALLBACK")
    spark.conf.set(WHOLE_STAGE, "false")
    spark.conf.set(ADAPTIVE, "false")
    codegen = Codegen(spark, lambda: [])
    codegen.fit(5, spark)
    codegen.fit(50_000, spark)
    assert modes(spark) == ("FALLBACK", "false", "false") and codegen.interpreted is None


@pytest.mark.parametrize("value", ["-1", "many"])
def test_a_setting_that_is_no_number_of_records_is_refused(spark, setting, value):
    setting(value)
    with pytest.raises(ConfigError) as err:
        Codegen(spark, lambda: [])
    assert err.value.field == INTERPRET_BELOW and err.value.value == value


def test_without_adaptive_execution_a_few_changes_are_joined_to_the_table_by_hash(spark, setting, tmp_path):
    """A MERGE's rewrite is a full outer join of its changes to the rows of the files it
    rewrites: the local session plans it as a hash table of the changes, not a sort of the rows
    (infra/session.py), also in a batch that runs without adaptive execution."""
    spark.conf.set(ADAPTIVE, "false")
    table = table_of(spark, tmp_path / "t", 10_000)
    changes = spark.range(0, 20_000, 1000).selectExpr("id", "'new' AS text")
    joined = changes.alias("s").join(table.read(spark).alias("t"), "id", "full_outer")
    plan = joined._jdf.queryExecution().executedPlan().toString()
    assert "ShuffledHashJoin" in plan and "SortMergeJoin" not in plan
    assert joined.count() == 10_000 + 10


def test_a_frame_not_from_kafka_has_no_planned_count(spark):
    """Only a Kafka micro-batch is counted before its first job (batch/planned.py); any other
    frame, built from rows, from an RDD or from a range, is counted by its first job."""
    assert planned_records(spark.createDataFrame([(1, "a")], "id int, v string")) is None
    assert planned_records(spark.createDataFrame(spark.sparkContext.parallelize([(1,)]), "id int")) is None
    assert planned_records(spark.range(3).select("id")) is None

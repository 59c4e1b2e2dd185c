"""The front door: `Pipeline` from a file or a mapping, `run` on the caller's session, and
`foreach_batch` on rows shaped as Spark's Kafka source gives them."""

from __future__ import annotations

import io
import os
import shutil
import time
from decimal import Decimal

import pytest
import yaml

from cdc_delta import Pipeline
from cdc_delta.config import load_config
from devtools.encode import EventWriter
from cdc_delta.errors import ConfigError, SourceColumnsMissing

from ..conftest import REPO
from ..readme_examples import python_examples
from .helpers import table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string", "amount": "decimal(10,2)"}
PG = EventWriter("postgresql", "items", COLUMNS)
KAFKA_ROWS = ("key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, "
              "timestampType int")


def mapping(tmp_path, **overrides) -> dict:
    return {"pipeline": "api", "source": {"kind": "kafka", "bootstrap_servers": "127.0.0.1:1", "topics": ["t"]},
            "lake": str(tmp_path / "lake"), "checkpoint": str(tmp_path / "ck"),
            "tables": [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}], **overrides}


def test_from_dict_checks_and_words_as_a_yaml_file_does(tmp_path):
    bad = mapping(tmp_path, trigger={"kind": "sometimes"})
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(ConfigError) as from_file:
        load_config(tmp_path / "p.yaml")
    with pytest.raises(ConfigError) as from_dict:
        Pipeline.from_dict(bad, name=str(tmp_path / "p.yaml"))
    assert str(from_dict.value) == str(from_file.value)
    assert from_dict.value.field == "trigger.kind"
    os.environ["CDC_DELTA_TEST_TOPIC"] = "from-env"
    assert Pipeline.from_dict(mapping(tmp_path, source={"kind": "kafka", "bootstrap_servers": "h:1",
                                                        "topics": ["${CDC_DELTA_TEST_TOPIC}"]})).config.source.topics == ["from-env"]


def test_foreach_batch_names_the_missing_columns_before_any_spark_work(spark, tmp_path):
    pipeline = Pipeline.from_dict(mapping(tmp_path))
    rows = spark.createDataFrame([(b"{}", "t")], "value binary, topic string")
    with pytest.raises(SourceColumnsMissing) as info:
        pipeline.foreach_batch(rows, 0)
    assert info.value.missing == ["partition", "offset", "timestamp"]
    assert "foreach_batch got a DataFrame without partition, offset, timestamp" in str(info.value)
    assert not (tmp_path / "lake").exists()      # refused before any table was made


def test_foreach_batch_takes_kafka_rows_as_they_come(spark, tmp_path):
    pipeline = Pipeline.from_dict(mapping(tmp_path))
    events = [PG.event("c", None, {"id": 1, "note": "a", "amount": Decimal("1.50")}, 10, 1),
              PG.event("c", None, {"id": 2, "note": "b", "amount": Decimal("2.00")}, 11, 1),
              PG.event("u", None, {"id": 1, "note": "a2", "amount": Decimal("1.75")}, 12, 1)]
    rows = [(b"k", e.encode(), "t", 0, i, None, 0) for i, e in enumerate(events)]
    pipeline.foreach_batch(spark.createDataFrame(rows[:2], KAFKA_ROWS), 0)
    pipeline.foreach_batch(spark.createDataFrame(rows[2:], KAFKA_ROWS), 1)
    pipeline.foreach_batch(spark.createDataFrame(rows[2:], KAFKA_ROWS), 1)     # a replayed batch
    assert table_rows(spark, pipeline.config, "items") == [
        {"id": 1, "note": "a2", "amount": Decimal("1.75")}, {"id": 2, "note": "b", "amount": Decimal("2.00")}]


def test_readme_notebook_example_runs_as_written_on_the_callers_session(spark, tmp_path, monkeypatch, capsys):
    (tmp_path / "configs").mkdir()
    shutil.copy(REPO / "configs" / "files-demo.yaml", tmp_path / "configs")
    shutil.copytree(REPO / "cdc_delta" / "samples", tmp_path / "cdc_delta" / "samples")
    monkeypatch.chdir(tmp_path)
    settings = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions", "spark.sql.session.timeZone")}
    exec(python_examples()[0], {"spark": spark})
    assert {k: spark.conf.get(k) for k in settings} == settings
    out = capsys.readouterr().out
    assert "29 records, 1 quarantined" in out and "|order_id|customer_id|amount|" in out
    orders = spark.read.format("delta").load(str(tmp_path / "lake" / "files-demo" / "orders")).orderBy("order_id").collect()
    assert [(r["order_id"], r["amount"], r["status"]) for r in orders] == [
        (1, Decimal("19.99"), "delivered"), (2, Decimal("245.00"), "shipped"), (3, Decimal("6.25"), "reordered"),
        (5, Decimal("-3.10"), "refund")]


def test_a_started_query_closes_its_handler_when_it_ends(spark, tmp_path, monkeypatch):
    """What the handler holds open (a route's Kafka producer) is let go when the query ends,
    not when the process does."""
    from cdc_delta.batch.runner import BatchHandler

    shutil.copytree(REPO / "cdc_delta" / "samples", tmp_path / "samples")
    config = yaml.safe_load((REPO / "configs" / "files-demo.yaml").read_text())
    config.update(source={"kind": "files", "path": str(tmp_path / "samples")}, lake=str(tmp_path / "lake"),
                  checkpoint=str(tmp_path / "ck"))
    closed = []
    monkeypatch.setattr(BatchHandler, "close", lambda handler: closed.append(handler.batches_done))
    query = Pipeline.from_dict(config).start(spark, trigger="available-now", out=io.StringIO())
    query.awaitTermination()
    for _ in range(100):     # Spark tells its listeners after the query has ended
        if closed:
            break
        time.sleep(0.1)
    assert closed == [1]

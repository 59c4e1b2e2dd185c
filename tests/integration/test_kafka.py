"""Against a real Kafka broker (scripts/kafka.sh on loopback): the same pipeline, consumed
with available-now and processing-time triggers, crashes included."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from cdc_delta import Pipeline, cli
from cdc_delta.batch.codegen import FACTORY_MODE, INTERPRET_BELOW
from cdc_delta.config import load_config
from cdc_delta.hooks import Hooks
from cdc_delta.infra.kafka_io import create_topics, produce

from ..conftest import FIXTURES, REPO, fixture_lines, read_jsonl
from ..ports import KAFKA, SPARK_MASTER
from ..spark.helpers import quarantine_rows, table_rows
from ..workload import TABLE, history, kafka_records, reference
from .processes import CdcDeltaProcess

pytestmark = pytest.mark.slow
KAFKA_PORT = int(os.environ.get("CDC_DELTA_TEST_KAFKA_PORT", str(KAFKA["kafka"])))
BOOTSTRAP = f"127.0.0.1:{KAFKA_PORT}"


def write_config(tmp: Path, tables: list[dict], **source) -> Path:
    """A pipeline of `tables` reading this module's broker unless `bootstrap_servers` says otherwise."""
    config = {"pipeline": "k", "source": {"kind": "kafka", "bootstrap_servers": BOOTSTRAP, **source},
              "lake": str(tmp / "lake"), "checkpoint": str(tmp / "ck"), "tables": tables}
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "pipeline.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run(path: Path, *args: str) -> int:
    return cli.main(["run", "--config", str(path), "--metrics-json", str(path.parent / "metrics.jsonl"), *args])


def metrics(path: Path) -> list[dict]:
    file = path.parent / "metrics.jsonl"
    return [json.loads(l) for l in file.read_text().splitlines()] if file.exists() else []


def keyed(lines: list[str]) -> list[tuple[bytes, bytes]]:
    out = []
    for line in lines:
        event = json.loads(line)
        env = event.get("payload") or event
        image = env.get("after") or env.get("before")
        out.append((json.dumps({"id": image["id"]}).encode(), line.encode()))
    return out


def test_fixtures_through_kafka(spark, broker, tmp_path):
    create_topics(broker, {"fx.mysql": 3, "fx.paimon": 2})
    produce(broker, "fx.mysql", keyed(fixture_lines(FIXTURES / "flink" / "debezium-data-schema-include.txt")))
    paimon = FIXTURES / "paimon" / "table" / "schemaevolution"
    produce(broker, "fx.paimon", keyed([l for i in (1, 2, 3) for l in fixture_lines(paimon / f"debezium-data-{i}.txt")]), partition=0)
    products = {"id": "int", "name": "string", "description": "string", "weight": "double"}
    path = write_config(tmp_path, [
        {"name": "mysql_products", "match": {"topic": "fx.mysql"}, "keys": ["id"], "columns": products},
        {"name": "paimon_products", "match": {"topic": "fx.paimon"}, "keys": ["id"], "columns": products},
    ], topics=["fx.mysql", "fx.paimon"])
    assert run(path) == 0
    config = load_config(path)
    assert table_rows(spark, config, "mysql_products") == read_jsonl(FIXTURES / "expected" / "flink-mysql-products.final.jsonl")
    assert table_rows(spark, config, "paimon_products") == read_jsonl(FIXTURES / "expected" / "paimon-schemaevolution.final.jsonl")


def workload_on_topic(broker: str, tmp: Path, topic: str, seed: int, events: int, keys: int,
                      malformed: int, **source):
    """A seeded workload produced to a 3-partition topic, and a config that reads it."""
    changes = history(seed=seed, events=events, keys=keys)
    records = kafka_records(changes, seed=seed, malformed=malformed)
    create_topics(broker, {topic: 3})
    produce(broker, topic, records)
    return changes, records, write_config(tmp, [TABLE], topics=[topic], **source)


def test_random_workload_on_partitions_with_tombstones_and_malformed(spark, broker, tmp_path):
    changes, records, path = workload_on_topic(broker, tmp_path, "rw.items", 11, 600, 40, 5, max_offsets_per_trigger=250)
    assert run(path) == 0
    config = load_config(path)
    assert table_rows(spark, config, "items") == reference(changes)
    bad = quarantine_rows(spark, config)
    assert len(bad) == 5 and all(b["reason"].startswith("malformed JSON") and b["topic"] == "rw.items" for b in bad)
    figures = metrics(path)
    assert len(figures) >= 3
    assert sum(f["records_in"] for f in figures) == len(records)
    assert sum(f["kafka_tombstones"] for f in figures) == sum(1 for _, v in records if v is None)


class ModeAtRead(Hooks):
    """How the session runs expressions when a batch starts reading its records."""

    def __init__(self, spark) -> None:
        self.spark, self.modes = spark, []

    def during(self, name: str):
        if name == "read":
            self.modes.append(self.spark.conf.get(FACTORY_MODE))
        return super().during(name)


def test_a_batch_is_counted_from_its_kafka_offsets_before_its_first_job(spark, broker, tmp_path):
    """A batch of 1,200 records decodes compiled from its first job on, and the next of fewer
    than 1,000 interpreted, each by its own offsets (batch/planned.py), not by the last batch's
    choice (batch/codegen.py)."""
    changes, records, path = workload_on_topic(broker, tmp_path, "pl.items", 13, 1500, 60, 0,
                                               max_offsets_per_trigger=1200)
    assert 1200 < len(records) < 2200
    hooks, below = ModeAtRead(spark), spark.conf.get(INTERPRET_BELOW)
    spark.conf.set(INTERPRET_BELOW, "1000")
    try:
        Pipeline.from_yaml(path).run(spark, hooks=hooks)
    finally:
        spark.conf.set(INTERPRET_BELOW, below)
    assert hooks.modes == ["FALLBACK", "NO_CODEGEN"]
    assert table_rows(spark, load_config(path), "items") == reference(changes)


def test_lost_checkpoint_resumes_from_the_offsets_in_the_tables(spark, broker, tmp_path, capsys):
    changes = history(seed=31, events=1200, keys=50)
    records = kafka_records(changes, seed=31, malformed=4)
    create_topics(broker, {"lost.items": 3})
    half = len(records) // 2
    produce(broker, "lost.items", records[:half])
    path = write_config(tmp_path, [TABLE], topics=["lost.items"], max_offsets_per_trigger=150)
    assert run(path) == 0
    first = metrics(path)
    shutil.rmtree(tmp_path / "ck")
    produce(broker, "lost.items", records[half:])
    capsys.readouterr()
    assert run(path) == 0
    out = capsys.readouterr().out
    assert f"the tables record batches of pipeline k up to {len(first) - 1}: resuming from lost.items/0@" in out
    assert "as app id k#1" in out
    config = load_config(path)
    assert table_rows(spark, config, "items") == reference(changes)
    assert len(quarantine_rows(spark, config)) == 4              # each bad event once, none repeated
    read_again = sum(r["records_in"] for r in metrics(path)[len(first):]) - (len(records) - half)
    assert 0 < read_again <= 2 * 150                              # the newest recorded batch, not the topic


def test_starting_offsets_latest_per_partition_and_pattern(spark, broker, tmp_path):
    rows = lambda ids: [(json.dumps({"id": i}).encode(), e.encode()) for i, e in ids]  # noqa: E731
    from devtools.encode import EventWriter
    w = EventWriter("postgresql", "items", TABLE["columns"])
    ev = lambda i, pos: w.event("c", None, {"id": i, "v": f"v{i}", "amount": 1}, pos, pos)  # noqa: E731

    create_topics(broker, {"late.items": 1})
    produce(broker, "late.items", rows([(1, ev(1, 10))]))
    latest = write_config(tmp_path / "latest", [TABLE], topics=["late.items"], starting_offsets="latest")
    assert run(latest) == 0
    produce(broker, "late.items", rows([(2, ev(2, 20))]))
    assert run(latest) == 0
    assert [r["id"] for r in table_rows(spark, load_config(latest), "items")] == [2]

    create_topics(broker, {"pp.items": 2})
    produce(broker, "pp.items", rows([(i, ev(i, 100 + i)) for i in range(4)]), partition=0)
    produce(broker, "pp.items", rows([(i, ev(i, 200 + i)) for i in range(10, 13)]), partition=1)
    per_partition = write_config(tmp_path / "pp", [TABLE], topics=["pp.items"],
                                 starting_offsets={"pp.items": {0: 2, 1: -2}})
    assert run(per_partition) == 0
    assert [r["id"] for r in table_rows(spark, load_config(per_partition), "items")] == [2, 3, 10, 11, 12]

    create_topics(broker, {"pat.a": 1})
    produce(broker, "pat.a", rows([(1, ev(1, 10))]))
    pattern = write_config(tmp_path / "pat", [TABLE], topic_pattern=r"pat\..*")
    assert run(pattern) == 0
    create_topics(broker, {"pat.b": 1})
    produce(broker, "pat.b", rows([(5, ev(5, 50))]))
    assert run(pattern) == 0
    assert [r["id"] for r in table_rows(spark, load_config(pattern), "items")] == [1, 5]


def test_status_reports_lag(spark, broker, tmp_path, capsys):
    create_topics(broker, {"st.items": 2})
    changes = history(seed=5, events=40, keys=10)
    produce(broker, "st.items", kafka_records(changes, seed=5))
    path = write_config(tmp_path, [TABLE], topics=["st.items"])
    assert run(path) == 0
    capsys.readouterr()
    assert cli.main(["status", "--config", str(path), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["total_lag"] == 0 and status["tables"]["items"]["rows"] == len(reference(changes))
    produce(broker, "st.items", [(b'{"id":1}', b"{}")] * 3, partition=1)
    assert cli.main(["status", "--config", str(path), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["total_lag"] == 3
    assert [p["lag"] for p in status["partitions"] if p["partition"] == 1] == [3]


@pytest.fixture(scope="module")
def spark_cluster():
    env = {**os.environ, "SPARK_MASTER_PORT": str(SPARK_MASTER["kafka"])}
    subprocess.run(["bash", "scripts/spark-cluster.sh", "start"], cwd=REPO, env=env, check=True)
    yield f"spark://127.0.0.1:{SPARK_MASTER['kafka']}"
    subprocess.run(["bash", "scripts/spark-cluster.sh", "stop"], cwd=REPO, env=env, check=False)


def test_spark_submit_to_a_standalone_cluster(spark, broker, spark_cluster, tmp_path):
    changes = history(seed=31, events=300, keys=25)
    create_topics(broker, {"cluster.items": 2})
    produce(broker, "cluster.items", kafka_records(changes, seed=31, malformed=2))
    path = write_config(tmp_path, [TABLE], topics=["cluster.items"])
    proc = subprocess.run(["bash", "scripts/submit.sh", spark_cluster, "run", "--config", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "done: 1 batch" in proc.stdout
    apps = list(Path("/tmp/cdc-delta-spark-17077/work").glob("app-*"))
    assert apps, "no executor ran on the standalone worker"
    config = load_config(path)
    assert table_rows(spark, config, "items") == reference(changes)
    assert len(quarantine_rows(spark, config)) == 2


def test_running_service_picks_up_new_topic_and_stops_on_sigterm(broker, tmp_path):
    from devtools.encode import EventWriter
    w = EventWriter("postgresql", "items", TABLE["columns"])
    event = lambda i: (json.dumps({"id": i}).encode(), w.event("c", None, {"id": i, "v": "x", "amount": 1}, i, i).encode())  # noqa: E731
    create_topics(broker, {"svc.a": 1})
    produce(broker, "svc.a", [event(1)])
    path = write_config(tmp_path, [TABLE], topic_pattern=r"svc\..*", options={"kafka.metadata.max.age.ms": "1000"})
    proc = CdcDeltaProcess("run", "--config", str(path), "--trigger", "1 second",
                           "--metrics-json", str(tmp_path / "metrics.jsonl"), log_dir=tmp_path)

    def records_seen() -> int:
        return sum(m["records_in"] for m in metrics(path))

    deadline = time.time() + 240
    while records_seen() < 1 and time.time() < deadline:
        time.sleep(0.5)
    create_topics(broker, {"svc.b": 1})
    produce(broker, "svc.b", [event(2)])
    while records_seen() < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert records_seen() == 2, "the running query did not read the topic created after it started"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "received SIGTERM" in out and "stopped by SIGTERM; the next run continues from" in out

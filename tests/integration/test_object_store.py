"""Tables and checkpoint on an S3-compatible object store (SeaweedFS, scripts/seaweedfs.sh):
a Kafka workload into s3a:// tables with an s3a:// checkpoint, killed with -9 inside a MERGE and
restarted, `status` on it, then the checkpoint lost and recovered from the tables. The tables
are read back with delta-rs, a second Delta implementation, and compared with the reference."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from cdc_delta.infra.kafka_io import create_topics, produce

from ..conftest import REPO
from ..ports import KAFKA, S3
from ..workload import COLUMNS, TABLE, history, kafka_records, reference

KAFKA_PORT = KAFKA["object_store"]
S3_PORT = S3["object_store"]
ACCESS_KEY, SECRET_KEY = "cdc", "cdc-s3-secret-for-tests"
BUCKET = "lake"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def object_store():
    import boto3

    env = {**os.environ, "S3_PORT": str(S3_PORT), "S3_ACCESS_KEY": ACCESS_KEY, "S3_SECRET_KEY": SECRET_KEY}
    subprocess.run(["bash", "scripts/seaweedfs.sh", "reset"], cwd=REPO, env=env, check=True, capture_output=True)
    subprocess.run(["bash", "scripts/seaweedfs.sh", "start"], cwd=REPO, env=env, check=True)
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{S3_PORT}", aws_access_key_id=ACCESS_KEY,
                      aws_secret_access_key=SECRET_KEY, region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    yield s3
    subprocess.run(["bash", "scripts/seaweedfs.sh", "reset"], cwd=REPO, env=env, check=False, capture_output=True)


def s3_config(tmp: Path, topic: str, broker: str) -> Path:
    secret = tmp / "s3-secret"
    secret.write_text(SECRET_KEY)
    config = {
        "pipeline": "s3", "lake": f"s3a://{BUCKET}/lake", "checkpoint": f"s3a://{BUCKET}/checkpoints/s3",
        "source": {"kind": "kafka", "bootstrap_servers": broker, "topics": [topic], "max_offsets_per_trigger": 200},
        "spark": {"spark.hadoop.fs.s3a.endpoint": f"http://127.0.0.1:{S3_PORT}",
                  "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
                  "spark.hadoop.fs.s3a.path.style.access": "true",
                  "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                  "spark.hadoop.fs.s3a.access.key": ACCESS_KEY,
                  "spark.hadoop.fs.s3a.secret.key": f"${{file:{secret}}}"},
        "tables": [TABLE],
    }
    path = tmp / "s3.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def cli(*args: str, fault: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "CDC_DELTA_FAULT": fault}
    return subprocess.run([sys.executable, "-m", "cdc_delta", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)


def s3_table(key: str):
    """A table on the store, opened with delta-rs."""
    from deltalake import DeltaTable

    options = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{S3_PORT}", "AWS_ACCESS_KEY_ID": ACCESS_KEY,
               "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    return DeltaTable(f"s3://{BUCKET}/{key}", storage_options=options)


def s3_rows(key: str, columns=None) -> list[dict]:
    """A table on the store as delta-rs reads it: `columns` (all when None), by key when given.
    Through its query engine: its Arrow reader refuses a table with deletion vectors."""
    import pyarrow
    from deltalake import QueryBuilder

    query = QueryBuilder().register("t", s3_table(key)).execute("SELECT * FROM t")
    rows = pyarrow.table(query.read_all()).to_pylist()
    if columns is None:
        return rows
    return sorted(({c: r[c] for c in columns} for r in rows), key=lambda r: r["id"])


def objects(s3, prefix: str) -> list[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def test_kafka_into_s3a_tables_survives_kill_9_and_a_lost_checkpoint(object_store, broker, tmp_path):
    changes = history(seed=61, events=900, keys=60)
    records = kafka_records(changes, seed=61, malformed=3)
    half = len(records) // 2
    create_topics(broker, {"s3.items": 2})
    produce(broker, "s3.items", records[:half])
    path = s3_config(tmp_path, "s3.items", broker)

    killed = cli("run", "--config", str(path), fault="merge@2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    done = cli("run", "--config", str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "on an object store: no file lock can keep a second writer out" in done.stdout
    assert SECRET_KEY not in done.stdout + done.stderr
    assert not (REPO / "s3a:").exists() and not (tmp_path / "s3a:").exists()      # never a local path
    status = cli("status", "--config", str(path), "--json")
    assert status.returncode == 0, status.stderr[-3000:]
    figures = json.loads(status.stdout)
    assert figures["total_lag"] == 0 and figures["tables"]["items"]["exists"]

    for key in objects(object_store, "checkpoints/s3/"):             # the checkpoint is lost
        object_store.delete_object(Bucket=BUCKET, Key=key)
    produce(broker, "s3.items", records[half:])
    resumed = cli("run", "--config", str(path))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming from s3.items/0@" in resumed.stdout and "as app id s3#1" in resumed.stdout

    expected = [{**r, "amount": Decimal(r["amount"]).quantize(Decimal("0.01"))} for r in reference(changes)]
    assert s3_rows("lake/items", COLUMNS) == expected
    # each batch is a large share of the table's rows: its MERGE copied the files it touched
    # (sinks/current_state/rewrite.py), as Delta's snapshot in the JVM gave the table's figures
    merges = [c["operationMetrics"] for c in s3_table("lake/items").history() if c["operation"] == "MERGE"]
    assert any(int(m["numTargetRowsUpdated"]) for m in merges)
    assert [int(m["numTargetDeletionVectorsAdded"]) for m in merges] == [0] * len(merges)
    quarantined = s3_rows("lake/_quarantine")
    assert len(quarantined) == 3 and len({(q["partition"], q["offset"]) for q in quarantined}) == 3
    assert any(k.startswith("lake/items/_cdc_tombstones/") for k in objects(object_store, "lake/items/"))


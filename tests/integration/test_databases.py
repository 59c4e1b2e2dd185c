"""End to end from real databases: PostgreSQL and MariaDB (Debian packages) -> Debezium on a
Kafka Connect worker -> Kafka -> cdc-delta running continuously -> Delta, compared row by row
with the source tables once everything has landed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from devtools.sandbox import chain
from devtools.sandbox.compare import diff, lake_rows
from devtools.sandbox.connectors import delete, register
from devtools.sandbox.databases import (Database, create_database, create_tables, mariadb_from_env,
                                         postgres_from_env, read_table)
from devtools.sandbox.workload import Counts, Workload

from ..conftest import REPO
from ..ports import CONNECT, KAFKA, MARIADB, POSTGRES

pytestmark = pytest.mark.slow
KAFKA_PORT = KAFKA["databases"]
PORTS = {"KAFKA_PORT": str(KAFKA_PORT), "KAFKA_CONTROLLER_PORT": str(KAFKA_PORT + 1),
         "CONNECT_PORT": str(CONNECT["databases"]), "PG_PORT": str(POSTGRES["databases"]),
         "MARIADB_PORT": str(MARIADB["databases"])}
BOOTSTRAP = f"127.0.0.1:{KAFKA_PORT}"
CONNECT = f"http://127.0.0.1:{PORTS['CONNECT_PORT']}"
SERVICES = ("kafka", "postgres", "mariadb", "connect")   # started in this order, stopped in reverse
CHANGES = 800        # row changes per streaming run
RATE = 20.0          # changes per second, so the workload spans several micro-batches


@pytest.fixture(scope="module")
def stack():
    env = {**os.environ, **PORTS}
    for service in SERVICES:
        subprocess.run(["bash", f"scripts/{service}.sh", "reset"], cwd=REPO, env=env, check=True, capture_output=True)
    try:
        for service in SERVICES:
            subprocess.run(["bash", f"scripts/{service}.sh", "start"], cwd=REPO, env=env, check=True)
        yield {"postgres": replace(postgres_from_env(), port=int(PORTS["PG_PORT"])),
               "mariadb": replace(mariadb_from_env(), port=int(PORTS["MARIADB_PORT"]))}
    finally:
        for service in reversed(SERVICES):
            subprocess.run(["bash", f"scripts/{service}.sh", "stop"], cwd=REPO, env=env, check=False)


class Pipeline:
    """cdc-delta as a service on one database's topics: processing-time trigger, SIGTERM to stop."""

    def __init__(self, db: Database, prefix: str, tmp: Path) -> None:
        self.db, self.prefix, self.tmp = db, prefix, tmp
        self.lake = tmp / "lake"
        self.metrics = tmp / "metrics.jsonl"
        config = chain.pipeline_config(db, prefix, BOOTSTRAP, str(self.lake), checkpoint=str(tmp / "ck"),
                                       trigger={"kind": "processing_time", "interval": "1 second"})
        self.config = tmp / "pipeline.yaml"
        self.config.write_text(yaml.safe_dump(config, sort_keys=False))
        self.log = tmp / "run.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the service and return once its query runs (the checkpoint's metadata exists)."""
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cdc_delta", "run", "--config", str(self.config),
                 "--metrics-json", str(self.metrics)], cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while not (self.tmp / "ck" / "metadata").exists():
            assert self.alive() and time.monotonic() < deadline, self.log.read_text()[-4000:]
            time.sleep(0.5)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def drain_and_stop(self) -> list[dict]:
        """Wait until the connector is quiet and every record is in a batch, then SIGTERM."""
        topics = list(chain.topics(self.db, self.prefix).values())
        ends = chain.wait_until_quiet(BOOTSTRAP, topics)
        try:
            reports = chain.wait_until_consumed(self.metrics, ends, alive=self.alive)
        except (TimeoutError, RuntimeError) as exc:
            raise AssertionError(f"{exc}\n--- cdc-delta output ---\n{self.log.read_text()[-4000:]}") from None
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(120) == 0, self.log.read_text()[-4000:]
        return reports


def assert_same_tables(spark, db: Database, lake: Path) -> int:
    """Every Delta table equals its source table, value by value; returns the rows compared."""
    diffs = [diff(t, read_table(db, t), lake_rows(spark.read.format("delta").load(str(lake / t.name)), t)) for t in db.tables]
    report = "\n".join(d.report() for d in diffs)
    print(report)
    assert all(d.equal for d in diffs), report
    return sum(d.source_rows for d in diffs)


def flowed(reports: list[dict]) -> dict[str, int]:
    """What cdc-delta saw: change events (Kafka tombstones apart) and what they did."""
    total = lambda name: sum(t[name] for r in reports for t in r["tables"].values())  # noqa: E731
    return {"batches": len(reports), "changes": sum(r["records_in"] - r["kafka_tombstones"] for r in reports),
            "kafka_tombstones": sum(r["kafka_tombstones"] for r in reports),
            "quarantined": sum(r["quarantined"] for r in reports),
            **{n: total(n) for n in ("inserted", "updated", "deleted", "truncates")}}


def stream_scenario(spark, stack, tmp_path, engine: str, name: str, truncated: str,
                    replica_identity: str = "default", schemas: bool = True) -> tuple[Counts, dict]:
    """Tables created empty, connector registered, cdc-delta running, then the workload with a
    TRUNCATE halfway: the lake must end equal to the source."""
    db = create_database(stack[engine], name)
    create_tables(db, replica_identity)
    register(CONNECT, chain.connector_for(db, name, BOOTSTRAP, schemas))
    pipeline = Pipeline(db, name, tmp_path)
    pipeline.start()
    try:
        workload = Workload(db, writers=3, seed=11)
        workload.run(CHANGES // 2, RATE)
        workload.truncate(truncated)
        workload.run(CHANGES // 2, RATE)
        figures = flowed(pipeline.drain_and_stop())
    finally:
        if pipeline.alive():
            pipeline.proc.kill()
        delete(CONNECT, name)
    rows = assert_same_tables(spark, db, pipeline.lake)
    print(f"{name}: {workload.counts} -> cdc-delta {figures}; {rows} rows compared")
    return workload.counts, figures


@pytest.mark.parametrize("identity", ["default", "full"])
def test_postgres_to_delta(spark, stack, tmp_path, identity):
    counts, figures = stream_scenario(spark, stack, tmp_path, "postgres", f"pg_{identity}", "customers",
                                      replica_identity=identity, schemas=(identity == "default"))
    # each committed row change is one event (a key change is a delete and a create), nothing more
    assert figures["changes"] == counts.changes
    assert figures["quarantined"] == 0
    assert figures["kafka_tombstones"] == counts.deletes
    assert figures["truncates"] == 1


def test_mariadb_to_delta(spark, stack, tmp_path):
    counts, figures = stream_scenario(spark, stack, tmp_path, "mariadb", "maria_stream", "payments", schemas=False)
    assert figures["changes"] == counts.changes
    assert figures["quarantined"] == 0
    assert figures["truncates"] == 1


def test_snapshot_then_stream(spark, stack, tmp_path):
    """The connector starts on tables that already hold rows while writers keep going: the
    snapshot's reads and the streamed changes meet in the same tables."""
    db = create_database(stack["postgres"], "pg_snapshot")
    create_tables(db)
    workload = Workload(db, writers=3, seed=23)
    before = workload.run(CHANGES)
    pipeline = Pipeline(db, "pg_snapshot", tmp_path)
    pipeline.start()
    writer = threading.Thread(target=workload.run, args=(CHANGES, RATE))
    try:
        writer.start()
        time.sleep(1.0)
        register(CONNECT, chain.connector_for(db, "pg_snapshot", BOOTSTRAP))
        writer.join()
        figures = flowed(pipeline.drain_and_stop())
    finally:
        writer.join()
        if pipeline.alive():
            pipeline.proc.kill()
        delete(CONNECT, "pg_snapshot")
    rows = assert_same_tables(spark, db, pipeline.lake)
    print(f"pg_snapshot: {before.changes} changes before the connector, {workload.counts} in all -> "
          f"cdc-delta {figures}; {rows} rows compared")
    assert figures["quarantined"] == 0
    assert 0 < figures["changes"] < workload.counts.changes + rows

"""Routes to Kafka against a local broker: a random workload of bank transactions (inserts,
updates that turn a row into or out of a withdrawal, deletes, duplicates, older windows sent
again), the withdrawals route read back with read_committed. Each change that meets the
condition is there exactly once, in source order per key: on a clean run, across kill -9 inside
the route's transaction and after the tables committed, and across a lost checkpoint."""

from __future__ import annotations

import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from decimal import Decimal

import pytest
from confluent_kafka import Consumer, TopicPartition

from cdc_delta.config import load_config
from cdc_delta.errors import RouteFailed
from cdc_delta.infra.kafka_io import create_topics, produce, read_topic
from devtools.encode import EventWriter

from ..conftest import REPO
from ..ports import KAFKA
from ..spark.helpers import table_rows
from .test_kafka import metrics, run, write_config

KAFKA_PORT = KAFKA["routes"]
pytestmark = pytest.mark.slow

COLUMNS = {"txn_id": "bigint", "acc_id": "bigint", "txn_value": "decimal(12,2)", "txn_type": "string"}
WITHDRAWALS = {"name": "withdrawals", "when": "txn_type = 'withdrawal' AND op IN ('c', 'u', 'r')",
               "topic": "pg.bank.transactions.withdrawals"}
TABLE = {"name": "transactions", "match": {"table": "transactions"}, "keys": ["txn_id"], "columns": COLUMNS,
         "routes": [WITHDRAWALS]}


def bank_history(seed: int, events: int, keys: int) -> list[tuple[str, int, dict]]:
    rnd = random.Random(seed)
    rows: dict[int, dict] = {}
    out = []
    for _ in range(events):
        key = rnd.randrange(keys)
        row = {"txn_id": key, "acc_id": rnd.randrange(5), "txn_value": Decimal(rnd.randrange(1, 10**6)) / 100,
               "txn_type": rnd.choice(["withdrawal", "deposit", "transfer"])}
        if key not in rows:
            out.append(("c", key, row))
            rows[key] = row
        elif rnd.random() < 0.8:
            out.append(("u", key, row))
            rows[key] = row
        else:
            out.append(("d", key, {"txn_id": key}))
            del rows[key]
    return out


def delivered(changes, seed: int) -> list[tuple[bytes, bytes | None]]:
    """Postgres events keyed by txn_id, with duplicates and, as after connector restarts,
    older windows sent again; a Kafka tombstone after each delete."""
    rnd = random.Random(seed)
    writer = EventWriter("postgresql", "transactions", COLUMNS, db="bank")
    events = []
    for i, (op, key, row) in enumerate(changes):
        before, after = (row, None) if op == "d" else (None, row)
        events.append((json.dumps({"txn_id": key}).encode(), writer.event(op, before, after, 1000 + 10 * i,
                                                                          10_000 + i).encode(), op))
    records = []
    for i, (key, value, op) in enumerate(events):
        records.append((key, value))
        if op == "d":
            records.append((key, None))
        if rnd.random() < 0.05:
            records.append((key, value))                               # a duplicate
        if i > 20 and rnd.random() < 0.03:
            start = rnd.randrange(max(0, i - 20), i)
            records += [(k, v) for k, v, _ in events[start:i]]          # an older window again
    return records


def expected_messages(changes) -> dict[str, list[tuple[str, str]]]:
    """Per key, in source order: (op, txn_type) of each change the condition selects."""
    out: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for op, key, row in changes:
        if op in ("c", "u") and row["txn_type"] == "withdrawal":
            out[json.dumps({"txn_id": key}, separators=(",", ":"))].append((op, row["txn_value"]))
    return dict(out)


def by_key(messages) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list] = collections.defaultdict(list)
    for m in messages:
        value = json.loads(m.value(), parse_float=Decimal)
        out[m.key().decode()].append((value["op"], Decimal(value["row"]["txn_value"])))
    return dict(out)


def assert_routed_once(broker: str, changes, tmp_path) -> int:
    messages = read_topic(broker, WITHDRAWALS["topic"])
    (tmp_path / "routed.txt").write_text("".join(f"{m.partition()} {m.offset()} {m.key()} {m.value()} {m.headers()}\n" for m in messages))
    got = by_key(messages)
    want = expected_messages(changes)
    assert got == want
    return sum(map(len, want.values()))


def test_withdrawals_route_exactly_once_across_kill_9_and_a_lost_checkpoint(spark, broker, tmp_path):
    changes = bank_history(seed=51, events=500, keys=40)
    records = delivered(changes, seed=51)
    create_topics(broker, {"pg.bank.transactions": 2})
    half = len(records) // 2
    produce(broker, "pg.bank.transactions", records[:half])
    path = write_config(tmp_path, [TABLE], bootstrap_servers=broker, topics=["pg.bank.transactions"],
                        max_offsets_per_trigger=120)
    cmd = [sys.executable, "-m", "cdc_delta", "run", "--config", str(path),
           "--metrics-json", str(tmp_path / "metrics.jsonl")]
    kills = collections.Counter()
    for point in ("route@1", "committed@1", "route@2", ""):
        done = subprocess.run(cmd, cwd=REPO, env={**os.environ, "CDC_DELTA_FAULT": point, "CDC_DELTA_FAULT_SEED": "7"},
                              capture_output=True, text=True, timeout=600)
        if point:
            assert done.returncode == -signal.SIGKILL, done.stderr[-3000:]
            kills[point] += 1
        else:
            assert done.returncode == 0, done.stderr[-3000:]
    shutil.rmtree(tmp_path / "ck")                    # lost: the next run resumes from the tables
    produce(broker, "pg.bank.transactions", records[half:])
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resuming from" in done.stdout
    routed = assert_routed_once(broker, changes, tmp_path)
    uncommitted = len(read_topic(broker, WITHDRAWALS["topic"], "read_uncommitted"))
    assert uncommitted >= routed
    # a killed run's committed transaction is not in the metrics; the runs that finished count theirs
    assert 0 < sum(m["tables"]["transactions/withdrawals"]["routed"] for m in metrics(path)) <= routed
    rows = table_rows(spark, load_config(path), "transactions")
    print(f"routes: {routed} withdrawals routed once over {len(records)} records, kills {dict(kills)}, "
          f"lost checkpoint resumed; read_uncommitted saw {uncommitted} messages; {len(rows)} rows")


def test_a_batch_with_nothing_that_meets_the_condition_sends_nothing_and_keeps_the_ledger(spark, broker, tmp_path):
    """A batch none of whose changes meets the condition opens no transaction, so the ledger does
    not move; the next batch's withdrawal is sent once, its deposits read again with it, not."""
    source, route = "quiet.bank.transactions", {**WITHDRAWALS, "topic": "quiet.withdrawals"}
    create_topics(broker, {source: 1})
    writer = EventWriter("postgresql", "transactions", COLUMNS, db="bank")
    deposits = [row_event(writer, "c", key, "deposit", 10 + key) for key in range(3)]
    produce(broker, source, deposits)
    path = write_config(tmp_path, [{**TABLE, "routes": [route]}], bootstrap_servers=broker, topics=[source])
    assert run(path) == 0
    ledger = ledger_offsets(broker, "cdc-delta.k.transactions.withdrawals", source)
    assert (read_topic(broker, route["topic"]), ledger) == ([], [-1001])   # -1001: none committed
    produce(broker, source, [row_event(writer, "u", 1, "withdrawal", 20), *deposits])
    assert run(path) == 0
    assert by_key(read_topic(broker, route["topic"])) == {'{"txn_id":1}': [("u", Decimal("1.50"))]}
    assert ledger_offsets(broker, "cdc-delta.k.transactions.withdrawals", source) == [7]
    assert [m["tables"]["transactions/withdrawals"]["routed"] for m in metrics(path)] == [0, 1]


def row_event(writer: EventWriter, op: str, key: int, kind: str, position: int) -> tuple[bytes, bytes]:
    row = {"txn_id": key, "acc_id": 1, "txn_value": Decimal("1.50"), "txn_type": kind}
    return json.dumps({"txn_id": key}).encode(), writer.event(op, None, row, position, 1000 + position).encode()


def ledger_offsets(broker: str, group: str, topic: str) -> list[int]:
    """The route's ledger: the offsets its transactions committed for the source's partition."""
    consumer = Consumer({"bootstrap.servers": broker, "group.id": group, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in consumer.committed([TopicPartition(topic, 0)], timeout=30)]
    finally:
        consumer.close()


def test_a_producer_the_broker_refuses_stops_the_batch_which_a_run_with_it_mended_sends_once(broker, tmp_path,
                                                                                            capsys):
    """The route's producer opens beside the batch's first jobs; when the broker refuses it (a
    transaction timeout over the broker's maximum), the batch stops before the table is written,
    with the route and Kafka's reason in one line, and the next run sends it once."""
    source, route = "refused.bank.transactions", {**WITHDRAWALS, "topic": "refused.withdrawals"}
    create_topics(broker, {source: 1})
    writer = EventWriter("postgresql", "transactions", COLUMNS, db="bank")
    produce(broker, source, [row_event(writer, "c", 1, "withdrawal", 10)])
    tables = [{**TABLE, "routes": [route]}]
    refused = write_config(tmp_path, tables, bootstrap_servers=broker, topics=[source],
                           options={"kafka.transaction.timeout.ms": "3600000"})
    assert run(refused) == RouteFailed.exit_code
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: table transactions: route withdrawals: the Kafka transaction of "
                            "cdc-delta.k.transactions.withdrawals failed: ")
    assert "max.transaction.timeout.ms" in error
    assert (read_topic(broker, route["topic"]), metrics(refused)) == ([], [])
    mended = write_config(tmp_path, tables, bootstrap_servers=broker, topics=[source])
    assert run(mended) == 0
    assert by_key(read_topic(broker, route["topic"])) == {'{"txn_id":1}': [("c", Decimal("1.50"))]}
    assert [m["tables"]["transactions/withdrawals"]["routed"] for m in metrics(mended)] == [1]

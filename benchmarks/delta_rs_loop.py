"""Baseline 2: a delta-rs (`deltalake`) merge loop, no JVM. A confluent-kafka consumer takes up
to MAX_OFFSETS records at a time, keeps the last change per key in offset order, and MERGEs
them (delete, update, insert) into the table; offsets are committed after the MERGE. No
ordering guard, no tombstones, no TOAST handling, no quarantine.

    python -m benchmarks.delta_rs_loop BOOTSTRAP TOPIC TABLE_PATH MAX_OFFSETS WRAPPED TIMES_JSONL
"""

from __future__ import annotations

import json
import sys
import time
import uuid

import pyarrow as pa
from confluent_kafka import Consumer
from deltalake import DeltaTable

from cdc_delta.infra.kafka_io import end_offsets

from .tables import PLAIN_TYPES

ARROW = {"bigint": pa.int64(), "string": pa.string()}
SCHEMA = pa.schema([(c, ARROW[t]) for c, t in PLAIN_TYPES.items()] + [("op", pa.string())])


def main(bootstrap: str, topic: str, table: str, max_offsets: int, wrapped: bool, times: str) -> None:
    ends = end_offsets(bootstrap, [topic])[topic]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"delta-rs-{uuid.uuid4()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    done = {p: 0 for p in ends}
    batch_id = 0
    while any(done[p] < end for p, end in ends.items()):
        started = time.monotonic()
        messages = consumer.consume(num_messages=max_offsets, timeout=1.0)
        if not messages:
            continue
        latest: dict[int, tuple[str, dict]] = {}
        for m in messages:
            done[m.partition()] = m.offset() + 1
            if m.value() is None:
                continue
            event = json.loads(m.value())
            event = event["payload"] if wrapped else event
            image = event["after"] if event["op"] != "d" else event["before"]
            latest[image["id"]] = (event["op"], image)
        if latest:
            columns = {c: [image.get(c) for _, image in latest.values()] for c in PLAIN_TYPES}
            columns["op"] = [op for op, _ in latest.values()]
            source = pa.table(columns, schema=SCHEMA)
            values = {c: f"s.{c}" for c in PLAIN_TYPES}
            (DeltaTable(table).merge(source, "t.id = s.id", source_alias="s", target_alias="t")
             .when_matched_delete("s.op = 'd'").when_matched_update(values, "s.op <> 'd'")
             .when_not_matched_insert(values, "s.op <> 'd'").execute())
        consumer.commit(asynchronous=False)
        with open(times, "a") as fh:
            fh.write(json.dumps({"batch_id": batch_id, "seconds": time.monotonic() - started,
                                 "records": len(messages), "finished_at": time.time()}) + "\n")
        batch_id += 1
    consumer.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], int(a[3]), a[4] == "1", a[5])

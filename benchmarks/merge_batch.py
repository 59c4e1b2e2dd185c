"""Seconds per batch: N change events (10% inserts, 80% updates, 10% deletes) merged into a
table of M rows, by cdc-delta's batch handler, against a plain MERGE of the same batch in the
same run (the seed recipe's core: decode, keep the latest ts_ms per key, three-clause MERGE,
no ordering guard, no tombstones, no quarantine).

    python benchmarks/merge_batch.py --rows 100000 --events 10000 --batches 3
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import Window  # noqa: E402

from cdc_delta.batch import BatchHandler  # noqa: E402
from cdc_delta.config import parse_config  # noqa: E402
from cdc_delta.debezium.encode import EventWriter  # noqa: E402
from cdc_delta.session import get_spark  # noqa: E402

COLUMNS = {"id": "bigint", "customer": "bigint", "status": "string", "note": "string", "amount": "double"}
RAW = "value binary, topic string, partition int, offset bigint, origin string, kafka_ts timestamp"


def row(key: int, rnd: random.Random) -> dict:
    return {"id": key, "customer": rnd.randrange(10_000), "status": rnd.choice(["new", "paid", "shipped"]),
            "note": "n" * rnd.randrange(300, 400), "amount": round(rnd.random() * 1000, 2)}


def events(writer: EventWriter, keys: list[int], n: int, next_key: int, pos: int, rnd: random.Random):
    out = []
    for i in range(n):
        r = rnd.random()
        if r < 0.1:
            out.append(writer.event("c", None, row(next_key, rnd), pos + i, pos + i))
            keys.append(next_key)
            next_key += 1
        elif r < 0.9:
            out.append(writer.event("u", None, row(rnd.choice(keys), rnd), pos + i, pos + i))
        else:
            k = keys.pop(rnd.randrange(len(keys)))
            out.append(writer.event("d", {"id": k}, None, pos + i, pos + i))
    return out, next_key


def raw(spark, values, first_offset):
    rows = [(bytearray(v.encode()), "bench", 0, first_offset + i, "", None) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, RAW)


def plain_merge(spark, path: str, batch) -> None:
    """The seed recipe on the same batch: latest ts_ms per key, then one three-clause MERGE."""
    schema = "before struct<id:bigint>, after struct<id:bigint,customer:bigint,status:string,note:string,amount:double>, op string, ts_ms bigint"
    env = batch.select(F.from_json(F.col("value").cast("string"), schema).alias("e")).select("e.*")
    keyed = env.select(F.coalesce("after.id", "before.id").alias("key"), "op", "ts_ms", "after")
    latest = keyed.withColumn("rn", F.row_number().over(Window.partitionBy("key").orderBy(F.desc("ts_ms")))).filter("rn = 1")
    from delta.tables import DeltaTable
    cols = list(COLUMNS)
    (DeltaTable.forPath(spark, path).alias("t").merge(latest.alias("s"), "t.id = s.key")
     .whenMatchedDelete("s.op = 'd'")
     .whenMatchedUpdate("s.op <> 'd'", {c: f"s.after.{c}" for c in cols})
     .whenNotMatchedInsert("s.op <> 'd'", {c: f"s.after.{c}" for c in cols}).execute())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--batches", type=int, default=3)
    args = ap.parse_args()
    spark = get_spark("cdc-delta-bench")
    tmp = Path(tempfile.mkdtemp(prefix="cdc-bench-"))
    config = parse_config({"pipeline": "bench", "source": {"kind": "files", "path": str(tmp / "in")},
                           "lake": str(tmp / "lake"), "tables": [
                               {"name": "orders", "match": {"table": "orders"}, "keys": ["id"], "columns": COLUMNS}]})
    handler = BatchHandler(spark, config)
    handler.prepare()
    writer = EventWriter("postgresql", "orders", COLUMNS)
    rnd = random.Random(7)
    initial = [writer.event("r", None, row(k, rnd), 1, 1, snapshot=True) for k in range(args.rows)]
    t = time.monotonic()
    handler.process(raw(spark, initial, 0), 0)
    load = time.monotonic() - t
    plain_path = str(tmp / "plain")
    spark.read.format("delta").load(str(tmp / "lake" / "orders")).select(*COLUMNS).write.format("delta").save(plain_path)
    keys, next_key, pos, offset = list(range(args.rows)), args.rows, 10, args.rows
    ours, plain = [], []
    for b in range(1, args.batches + 1):
        values, next_key = events(writer, keys, args.events, next_key, pos, rnd)
        pos += args.events
        batch = raw(spark, values, offset).persist()
        batch.count()
        offset += args.events
        t = time.monotonic()
        report, _ = handler.process(batch, b)
        ours.append(time.monotonic() - t)
        t = time.monotonic()
        plain_merge(spark, plain_path, batch)
        plain.append(time.monotonic() - t)
        batch.unpersist()
        print(f"{report.line()} | plain MERGE {plain[-1]:.2f} s", flush=True)
    mean_ours, mean_plain = sum(ours) / len(ours), sum(plain) / len(plain)
    print(f"initial load of {args.rows} snapshot rows: {load:.1f} s")
    print(f"cdc-delta: {mean_ours:.2f} s per batch of {args.events} events into {args.rows} rows; "
          f"plain MERGE baseline {mean_plain:.2f} s; ratio {mean_ours / mean_plain:.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Where the read_decode phase's seconds go per record: each stage of the decode forced alone
(a `noop` write) over the same cached records of the benchmark's stream, in one process, in
turns, the first round (cold) left out.

    python -m benchmarks.decode_stages [--records 50000] [--rounds 3] [--wrapped]

Stages: the envelope without and with its error column (the strict JSON checks parse each
value again), the envelope routed to its table, that and the batch's origins aggregated from it
(batch/facts.py), and the table's changes (typed columns, order, reason) with the key alone,
the key and one more column each, and every column. The changes read the routed records from
Spark's cache, as a batch's do (batch/runner.py caches its decoded records in its first job):
built on the uncached records, their table filter would reach into the decode and parse each
value again. So the envelope lines are what the first job's decode costs, and the step from
one changes line to the next is what that column's decode costs. Beside each stage, the
largest method Spark generated for it: HotSpot does not compile a method over 8,000 bytes of
bytecode (-XX:-DontCompileHugeMethods lifts that), and such a method runs in the JVM's
interpreter.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path
from typing import Iterator

from pyspark.sql import DataFrame

from cdc_delta.batch.facts import origins_query, read_origins
from cdc_delta.debezium.envelope import parse_envelopes
from cdc_delta.frame import ERROR
from cdc_delta.infra.session import get_spark
from cdc_delta.steps.changes import table_changes
from cdc_delta.steps.decode import decode
from cdc_delta.steps.view import TableView

from .alone import alone
from .in_process import handler_on_copy, raw_records
from .stream import TABLE, Stream

HUGE_METHOD_BYTES = 8000     # HotSpot's HugeMethodLimit


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=50_000, help="change events (deletes add a Kafka tombstone)")
    ap.add_argument("--rows", type=int, default=100_000, help="rows of the seeded table the stream changes")
    ap.add_argument("--rounds", type=int, default=3, help="rounds after the cold one")
    ap.add_argument("--wrapped", action="store_true", help="events with the schema/payload wrapper")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-decode-stages"))
    args = ap.parse_args(argv)
    alone()
    spark = get_spark("cdc-delta-decode-stages", {"spark.cdcdelta.interpretBelowRecords": "0"})
    handler, _ = handler_on_copy(spark, args.work, args.rows)
    values = [value for _, value in Stream(args.rows, wrapped=args.wrapped).events(args.records)]
    raw = raw_records(spark, values, 0).repartition(spark.sparkContext.defaultParallelism).persist()
    records = raw.count()
    config = handler.config
    max_value_bytes = config.decoding.max_value_bytes
    routed = decode(raw, config.source_tables, max_value_bytes, config.unmatched == "quarantine")
    spec = next(t for t in config.source_tables if t.name == TABLE)
    view = handler.schemas.view(spec, read_origins(routed), routed)
    cached = cached_records(routed, args.work / "routed")
    seconds: dict[str, list[float]] = {}
    largest = {name: largest_method(frame) for name, frame in stages(raw, routed, cached, view, max_value_bytes)}
    for round_ in range(args.rounds + 1):
        for name, frame in stages(raw, routed, cached, view, max_value_bytes):
            started = time.monotonic()
            frame.write.format("noop").mode("overwrite").save()
            if round_:
                seconds.setdefault(name, []).append(time.monotonic() - started)
    print(f"{records:,} records ({'wrapped' if args.wrapped else 'plain'}), mean of {args.rounds} warm rounds:")
    for name, times in seconds.items():
        mean = statistics.mean(times)
        flag = "  (over the JIT's limit)" if largest[name] > HUGE_METHOD_BYTES else ""
        print(f"  {name:32s} {mean:6.2f} s  {mean / records * 1e6:6.1f} µs/record  "
              f"largest generated method {largest[name]:6,} bytes{flag}")
    spark.stop()


def cached_records(routed: DataFrame, folder: Path) -> DataFrame:
    """The routed records cached, as a batch's first job leaves them: saved and read back
    first, so that the cached plan is not `routed`'s (Spark would then read the cache for the
    envelope stages too, and they would time a scan of it)."""
    routed.write.mode("overwrite").parquet(str(folder))
    cached = routed.sparkSession.read.parquet(str(folder)).persist()
    cached.count()
    return cached


def stages(raw: DataFrame, routed: DataFrame, cached: DataFrame, view: TableView, max_value_bytes: int
           ) -> Iterator[tuple[str, DataFrame]]:
    envelope = parse_envelopes(raw, max_value_bytes)
    yield "envelope, no error column", envelope.drop(ERROR)
    yield "envelope", envelope
    yield "envelope routed", routed
    yield "envelope routed + origins", origins_query(routed)
    key = view.keys
    yield "changes: key", table_changes(cached, only(view, key))
    for column in view.values:
        yield f"changes: key + {column}", table_changes(cached, only(view, [*key, column]))
    yield "changes: every column", table_changes(cached, view)


def largest_method(frame: DataFrame) -> int:
    """The bytecode size of the largest method Spark generates for the frame's plan (planned
    without adaptive execution, whose plan hides its stages from the listing until it runs)."""
    spark, adaptive = frame.sparkSession, "spark.sql.adaptive.enabled"
    was = spark.conf.get(adaptive)
    spark.conf.set(adaptive, "false")
    try:
        stages = frame.select("*")._jdf.queryExecution().debug().codegenToSeq().iterator()
    finally:
        spark.conf.set(adaptive, was)
    largest = 0
    while stages.hasNext():
        largest = max(largest, stages.next()._3().maxMethodCodeSize())
    return largest


def only(view: TableView, columns: list[str]) -> TableView:
    return dataclasses.replace(view, columns={c: view.columns[c] for c in columns})


if __name__ == "__main__":
    main()

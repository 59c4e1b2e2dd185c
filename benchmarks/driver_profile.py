"""Where the driver's seconds of a batch go, by Python call site: cProfile of the batch handler
over the benchmark's stream, in one process (no broker: the records are built in memory), into
a copy of the seeded table. Spark's event log says when jobs run; this says which line of
cdc-delta waits between them (planning in persist/unpersist, a select's analysis, a collect).

    python -m benchmarks.driver_profile [--rows 100000] [--batches 4] [--batch 10000]

The first batch is cold and left out of the profile; printed: each batch's seconds and
phases, then the cumulative time of cdc-delta's and pyspark's DataFrame functions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from cdc_delta.infra.session import get_spark

from .alone import alone
from .in_process import handler_on_copy, raw_records
from .stream import Stream


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--batch", type=int, default=10_000, help="events per batch")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-driver-profile"))
    args = ap.parse_args(argv)
    alone()
    spark = get_spark("cdc-delta-driver-profile")
    handler, _ = handler_on_copy(spark, args.work, args.rows)
    events = [value for _, value in Stream(args.rows).events(args.batches * args.batch)]
    profile = cProfile.Profile()
    for i in range(args.batches):
        raw = raw_records(spark, events[i * args.batch:(i + 1) * args.batch], i * args.batch).persist()
        raw.count()
        started = time.monotonic()
        if i:
            profile.enable()
        report, _ = handler.process(raw, i)
        profile.disable()
        print(f"batch {i}: {time.monotonic() - started:.2f} s, phases {report.phases}", flush=True)
        raw.unpersist()
    stats = pstats.Stats(profile).sort_stats("cumulative")
    stats.print_stats(r"cdc_delta", 30)
    stats.print_stats(r"pyspark/sql/classic/dataframe", 12)
    spark.stop()


if __name__ == "__main__":
    main()

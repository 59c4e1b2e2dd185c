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
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cdc_delta.batch import BatchHandler
from cdc_delta.config import parse_config
from cdc_delta.frame import RAW_SCHEMA
from cdc_delta.infra.session import get_spark

from .measure import REPO
from .stream import Stream
from .tables import pipeline_config


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--batch", type=int, default=10_000, help="events per batch")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-driver-profile"))
    args = ap.parse_args(argv)
    seed = args.work / f"seed-{args.rows}"
    if not seed.exists():
        subprocess.run([sys.executable, "-m", "benchmarks.tables", "seed", str(seed), str(args.rows)], cwd=REPO,
                       check=True)
    run = args.work / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(seed / "cdc_delta", run / "cdc_delta")
    spark = get_spark("cdc-delta-driver-profile")
    handler = BatchHandler(spark, parse_config(pipeline_config(run, "t", "127.0.0.1:1", 1)))
    handler.prepare()
    events = [value for _, value in Stream(args.rows).events(args.batches * args.batch)]
    profile = cProfile.Profile()
    for i in range(args.batches):
        rows = [(value, "t", 0, i * args.batch + n, "", None)
                for n, value in enumerate(events[i * args.batch:(i + 1) * args.batch])]
        raw = spark.createDataFrame(rows, RAW_SCHEMA).persist()
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

"""A lever judged batch by batch in one process: one batch handler over a copy of the seeded
table, its batches taking turns without and with the lever (A, B, A, B, …), so that the
machine's drift and the JIT's warming touch both sides alike. Separate runs (benchmarks/ab.py)
vary by about a tenth from one to the next on this machine, which hides a lever worth a few
percent; enough pairs of neighbouring batches show it.

    python -m benchmarks.alternate --rows 1000000 --batch 1000 --without toast-count
    python -m benchmarks.alternate --rows 100000 --batch 10000 spark.sql.shuffle.partitions=1

Only levers that leave every table as it would be: Spark settings (KEY=VALUE, set for B's
batches; A's keep the session's own; `--table KEY=VALUE` sets a property of the table copy for
both sides first) and, with --without, report-only work skipped in B's batches
(`toast-count`: the count of TOAST placeholders a batch leaves unresolved, which runs a job
against the table beside the MERGE). Printed: each batch's seconds, each side's mean over the
warm pairs, their ratio, the mean difference of a pair with its standard error, and in how many
pairs B's batch was the faster. Neighbouring batches still differ by a tenth or more here (their
keys, the garbage collector), so a lever of a few percent needs thirty pairs or so.
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pyspark.sql import SparkSession

from cdc_delta.infra.session import get_spark
from cdc_delta.sinks.current_state import CurrentState

from .alone import alone
from .in_process import handler_on_copy, raw_records
from .stream import PROFILES, Stream

COLD_PAIRS = 2     # the first pairs warm the JVM for both sides and are left out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the seeded table")
    ap.add_argument("--batch", type=int, default=1000, help="change events per batch")
    ap.add_argument("--pairs", type=int, default=32, help=f"pairs of batches, the first {COLD_PAIRS} left out")
    ap.add_argument("--profile", choices=[p for p in PROFILES if p != "snapshot"], default="uniform",
                    help="which keys the changes go to (benchmarks/stream.py)")
    ap.add_argument("--without", choices=sorted(SKIPPABLE), action="append", default=[],
                    help="report-only work that B's batches skip")
    ap.add_argument("--table", action="append", default=[], metavar="KEY=VALUE",
                    help="a property of the table copy, for both sides (delta.enableDeletionVectors=false)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-alternate"))
    ap.add_argument("settings", nargs="*", metavar="KEY=VALUE", help="Spark settings of B's batches")
    args = ap.parse_args(argv)
    settings = dict(_setting(s) for s in args.settings)
    if not settings and not args.without:
        ap.error("name a lever: KEY=VALUE settings, or --without")
    if args.pairs < COLD_PAIRS + 2:
        ap.error(f"--pairs {args.pairs}: at least {COLD_PAIRS + 2} (the first {COLD_PAIRS} warm the JVM)")
    alone()
    spark = get_spark("cdc-delta-alternate")
    handler, _ = handler_on_copy(spark, args.work, args.rows, dict(_setting(t) for t in args.table))
    batches = 2 * args.pairs
    events = [value for _, value in Stream(args.rows, profile=args.profile).events(batches * args.batch)]
    seconds: dict[bool, list[float]] = {False: [], True: []}
    for i in range(batches):
        lever = i % 2 == 1
        raw = raw_records(spark, events[i * args.batch:(i + 1) * args.batch], i * args.batch).persist()
        raw.count()
        with _lever(spark, settings if lever else {}, args.without if lever else []):
            started = time.monotonic()
            handler.process(raw, i)
            took = time.monotonic() - started
        raw.unpersist()
        print(f"batch {i} ({'B' if lever else 'A'}): {took:.2f} s", flush=True)
        if i >= 2 * COLD_PAIRS:
            seconds[lever].append(took)
    print(summary(seconds[False], seconds[True]))
    spark.stop()


def summary(a: list[float], b: list[float]) -> str:
    """The means, their ratio, and the paired difference with its standard error: a lever is
    shown only where the difference is a few standard errors from zero."""
    differences = [y - x for x, y in zip(a, b)]
    error = statistics.stdev(differences) / len(differences) ** 0.5
    faster = sum(d < 0 for d in differences)
    return (f"A {statistics.mean(a):.2f} s, B {statistics.mean(b):.2f} s per warm batch: B/A "
            f"{statistics.mean(b) / statistics.mean(a):.3f}; B - A {statistics.mean(differences):+.2f} s "
            f"(standard error {error:.2f} s); B faster in {faster} of {len(differences)} pairs")


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"setting {text!r}: expected KEY=VALUE, e.g. spark.sql.shuffle.partitions=1")
    return key, value


@contextmanager
def _lever(spark: SparkSession, settings: dict[str, str], skipped: list[str]) -> Iterator[None]:
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    undo = [SKIPPABLE[name]() for name in skipped]
    try:
        yield
    finally:
        for restore in undo:
            restore()
        for key, value in before.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def _skip_toast_count():
    """The TOAST count answers {} (nothing unresolved) without its job; returns the undo."""
    counted = CurrentState._count_unresolved
    CurrentState._count_unresolved = lambda self, *args: (lambda: {})
    return lambda: setattr(CurrentState, "_count_unresolved", counted)


SKIPPABLE = {"toast-count": _skip_toast_count}


if __name__ == "__main__":
    main()

"""One batch's MERGE in isolation, in variants of the plan and the table: where the MERGE's own
seconds go, without the rest of the batch competing for the cores.

    python -m benchmarks.merge_variants [--rows 1000000] [--rounds 3] [--batch 10000]

Runs the benchmark stream's first batches through the batch handler in one process (no broker),
captures the MERGE source of the last one, then runs each variant's MERGE of that source into a
fresh copy of the table as it was before it, in turns. Variants: today's plan; the same with
what a batch runs beside it (the tombstone append and the TOAST count, as sinks/current_state
runs them under the writer lock), and with each of the two alone; the plan on a table with
deletion vectors; the plan without its TOAST CASE (what reading the stored values costs); the
seed recipe's clauses (key only, no guard, no TOAST CASE), on the same table and on a copy
without cdc-delta's position and source-time columns, as the recipe stores rows (what those
columns cost the MERGE's rewrite of the files it touches); the plan on the table with Delta's
default statistics (what not tracking the position saves: lake/statistics.py).
`--only plan,recipe-narrow` runs the variants named.
Printed: each round's seconds and each variant's warm mean (rounds after the first) over the
first variant's (today's plan, unless --only leaves it out).
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_delta.frame import OP, SEQ_COLUMN, TS_COLUMN, toast_column
from cdc_delta.infra.names import quote
from cdc_delta.infra.session import get_spark
from cdc_delta.lake.statistics import STATS_COLUMNS
from cdc_delta.lake.tables import DeltaLocation, set_table_properties
from cdc_delta.lake.writes import commit_metadata
from cdc_delta.sinks import current_state
from cdc_delta.sinks.current_state import merge as merge_step
from cdc_delta.sinks.current_state.plan import MergePlan

from .alone import alone
from .in_process import handler_on_copy, raw_records
from .stream import TABLE, Stream

BATCHES = 3
BESIDE = {"tombstones", "count"}   # what a batch runs beside its MERGE
DELETION_VECTORS = {"delta.enableDeletionVectors": "true"}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=10_000, help="events per batch")
    ap.add_argument("--only", default="", help="the variants to run, by name, comma-separated (default: all)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-merge-variants"))
    args = ap.parse_args(argv)
    alone()
    spark = get_spark("cdc-delta-merge-variants")
    source, plan, before, call = capture_last_merge(spark, args.work, args.rows, args.batch)
    with_dv = before.with_name("before-dv")
    shutil.rmtree(with_dv, ignore_errors=True)
    shutil.copytree(before, with_dv)
    set_table_properties(spark, DeltaLocation(path=str(with_dv)), DELETION_VECTORS)
    beside = {"plan+beside": BESIDE, "plan+tombstones": {"tombstones"}, "plan+count": {"count"}}
    variants = {"plan": (source, plan, before), **{name: (source, work, before) for name, work in beside.items()},
                "plan+dv": (source, plan, with_dv),
                "plan-no-toast-case": (source, without_toast_case(plan), before),
                "recipe-shape": (source, recipe_shape(plan), before),
                "recipe-narrow": (source, without_meta(recipe_shape(plan)), narrow_copy(spark, before)),
                "plan+all-stats": (source, plan, default_stats_copy(spark, before)),
                "plan+copy": (source, plan, rewritten_copy(spark, before, "copy", lambda rows: rows)),
                "plan+binary-position": (binary_position_source(spark, source, args.work), plan,
                                         rewritten_copy(spark, before, "binary", with_binary_position))}
    if args.only:
        variants = {k: v for k, v in variants.items() if k in args.only.split(",")}
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    table = args.work / "table"
    for round_ in range(args.rounds):
        for name, (src, p, start) in variants.items():
            shutil.rmtree(table, ignore_errors=True)
            shutil.copytree(start, table)
            began = time.monotonic()
            if isinstance(p, set):
                merge_as_a_batch_does(spark, DeltaLocation(path=str(table)), src, call, p)
            else:
                merge_step._run_merge(DeltaLocation(path=str(table)), src, p)
            seconds[name].append(time.monotonic() - began)
            print(f"round {round_} {name:18} {seconds[name][-1]:.2f} s", flush=True)
    warm = {name: sum(s[1:]) / max(1, len(s) - 1) for name, s in seconds.items()}
    for name, mean in warm.items():
        print(f"{name:18} warm mean {mean:.2f} s ({mean / warm[next(iter(warm))]:.2f}x first)")
    spark.stop()


def capture_last_merge(spark: SparkSession, work: Path, rows: int, batch: int
                       ) -> tuple[DataFrame, MergePlan, Path, dict[str, Any]]:
    """The benchmark stream's batches through the handler; the last MERGE's source (saved as
    Parquet), its plan, a copy of the table (and its companions) as it was before that MERGE,
    and the arguments the table's sink gave merge_changes."""
    handler, run = handler_on_copy(spark, work, rows)
    events = [value for _, value in Stream(rows).events(BATCHES * batch)]
    captured: dict[str, Any] = {}
    real, real_changes = merge_step._run_merge, current_state.merge_changes
    before = work / "before"

    def capture_call(*args: Any, **kwargs: Any) -> tuple[int, int, int]:
        captured["call"] = dict(inspect.signature(real_changes).bind(*args, **kwargs).arguments)
        return real_changes(*args, **kwargs)

    def capture(target, src, plan, session=None):
        captured["plan"] = plan
        src.write.mode("overwrite").parquet(str(work / "source"))
        shutil.rmtree(before, ignore_errors=True)
        shutil.copytree(run / "cdc_delta" / TABLE, before)
        return real(target, src, plan, session)

    for i in range(BATCHES):
        if i == BATCHES - 1:
            merge_step._run_merge, current_state.merge_changes = capture, capture_call
        handler.process(raw_records(spark, events[i * batch:(i + 1) * batch], i * batch), i)
    merge_step._run_merge, current_state.merge_changes = real, real_changes
    source = spark.read.parquet(str(work / "source")).persist()
    source.count()
    return source, captured["plan"], before, captured["call"]


def merge_as_a_batch_does(spark: SparkSession, table: DeltaLocation, source: DataFrame, call: dict[str, Any],
                          work: set[str] = BESIDE) -> None:
    """The MERGE with (of `work`) the tombstone append beside it (merge_changes) and, when the
    batch had placeholders, the TOAST count in another thread against the version it reads."""
    args = {**call, "target": table, "changes": source, "has_deletes": call["has_deletes"] and "tombstones" in work}
    metadata = {"pipeline": "bench", "batch_id": args["batch_id"], "app_id": args["app_id"], "offsets": {}}
    with commit_metadata([spark], metadata), ThreadPoolExecutor(max_workers=1) as beside:
        counted = (beside.submit(merge_step.count_unresolved, spark, table, source, args["keys"], args["toasted"],
                                 args["key_range"], table.newest_version())
                   if args["toasted"] and "count" in work else None)
        merge_step.merge_changes(**args)
        if counted is not None:
            counted.result()


def recipe_shape(plan: MergePlan) -> MergePlan:
    """The seed recipe's MERGE on the same source: the key alone, no position guard, no TOAST
    CASE (what cdc-delta's clauses cost over the recipe's, on one source and table)."""
    on = plan.on.rsplit(" AND t.", 1)[0] if " BETWEEN " in plan.on else plan.on   # the key range comes last
    return replace(plan, on=on, delete_when=f"s.{OP} = 'd'", update_when=f"s.{OP} <> 'd'",
                   update_set={c: v for c, v in plan.insert_values.items()})


def without_toast_case(plan: MergePlan) -> MergePlan:
    """Today's plan with every column updated from the change, no TOAST CASE: what reading the
    stored value of a column that may hold a placeholder costs the MERGE (Delta then reads that
    column of every row in the files it touches)."""
    return replace(plan, update_set={c: f"s.{c}" for c in plan.update_set})


def without_meta(plan: MergePlan) -> MergePlan:
    """A plan that writes no position or source time."""
    meta = {quote(SEQ_COLUMN), quote(TS_COLUMN)}
    values = {c: v for c, v in plan.insert_values.items() if c not in meta}
    return replace(plan, update_set={c: v for c, v in plan.update_set.items() if c not in meta}, insert_values=values)


def narrow_copy(spark: SparkSession, before: Path) -> Path:
    """The table as it was before the MERGE, in as many files, without the position and source
    time columns."""
    return rewritten_copy(spark, before, "narrow", lambda rows: rows.drop(SEQ_COLUMN, TS_COLUMN))


def rewritten_copy(spark: SparkSession, before: Path, name: str,
                   change: Callable[[DataFrame], DataFrame]) -> Path:
    """The table as it was before the MERGE, its rows changed by `change`, in as many files."""
    copy = before.with_name(f"before-{name}")
    shutil.rmtree(copy, ignore_errors=True)
    files = DeltaTable.forPath(spark, str(before)).detail().first()["numFiles"]
    rows = change(spark.read.format("delta").load(str(before)))
    rows.repartition(files).write.format("delta").save(str(copy))
    return copy


def with_binary_position(rows: DataFrame) -> DataFrame:
    """`rows` with the position as one binary value that sorts as the struct does."""
    return rows.withColumn(SEQ_COLUMN, order_preserving_bytes(F.col(SEQ_COLUMN)))


def binary_position_source(spark: SparkSession, source: DataFrame, work: Path) -> DataFrame:
    """The MERGE source with its position, and its TOAST notes' positions, as binary values;
    saved and read back, so the conversion is not part of the timed MERGE."""
    notes = [c for c in source.columns if c.startswith(toast_column(""))]
    converted = with_binary_position(source).withColumns({
        c: F.when(F.col(c).isNotNull(), F.struct(order_preserving_bytes(F.col(c).getField("seq")).alias("seq"),
                                                 F.col(c).getField("known").alias("known")))
        for c in notes})
    converted.write.mode("overwrite").parquet(str(work / "source-binary"))
    rows = spark.read.parquet(str(work / "source-binary")).persist()
    rows.count()
    return rows


def order_preserving_bytes(seq: Column) -> Column:
    """The position's fields as bytes whose unsigned order is the struct's: each integer in
    big-endian with its sign bit flipped, each text followed by a zero byte (a measurement only:
    a text holding a zero byte would need escaping)."""
    def number(c: Column, digits: int) -> Column:
        flipped = c.cast("bigint").bitwiseXOR(F.lit(-(1 << 63))) if digits == 16 else c.cast("bigint") + (1 << 31)
        return F.unhex(F.lpad(F.hex(flipped), digits, "0"))

    def text(c: Column) -> Column:
        return F.concat(F.encode(c, "UTF-8"), F.unhex(F.lit("00")))

    fields = [text(seq.getField("text")), *[number(seq.getField(p), 16) for p in ("p1", "p2", "p3")],
              number(seq.getField("stream"), 8), text(seq.getField("origin")), number(seq.getField("partition"), 8),
              number(seq.getField("offset"), 16), number(seq.getField("op_rank"), 8)]
    return F.when(seq.isNotNull(), F.concat(*fields))


def default_stats_copy(spark: SparkSession, before: Path) -> Path:
    """The table as it was before the MERGE, with Delta's default statistics (the first 32
    columns, the position's fields among them) in place of cdc-delta's (lake/statistics.py)."""
    copy = before.with_name("before-all-stats")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(before, copy)
    spark.sql(f"ALTER TABLE delta.{quote(str(copy))} UNSET TBLPROPERTIES ('{STATS_COLUMNS}')")
    return copy


if __name__ == "__main__":
    main()

"""One batch's MERGE in isolation, in variants of the plan and the table: where the MERGE's own
seconds go, without the rest of the batch competing for the cores.

    python -m benchmarks.merge_variants [--rows 1000000] [--rounds 3]

Runs the benchmark stream's first batches through the batch handler in one process (no broker),
captures the MERGE source of the last one, then runs each variant's MERGE of that source into a
fresh copy of the table as it was before it, in turns. Variants: today's plan; the same on a
table with deletion vectors; the seed recipe's clauses (key only, no guard, no TOAST CASE).
Printed: each round's seconds and each variant's warm mean (rounds after the first) over
today's plan.
"""

from __future__ import annotations

import argparse
import shutil
import time
from dataclasses import replace
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from cdc_delta.frame import OP
from cdc_delta.infra.names import quote
from cdc_delta.infra.session import get_spark
from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.sinks.current_state import merge as merge_step
from cdc_delta.sinks.current_state.plan import MergePlan

from .in_process import handler_on_copy, raw_records
from .stream import TABLE, Stream

BATCHES, BATCH = 3, 10_000
DELETION_VECTORS = "'delta.enableDeletionVectors' = 'true'"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-merge-variants"))
    args = ap.parse_args(argv)
    spark = get_spark("cdc-delta-merge-variants")
    source, plan, before = capture_last_merge(spark, args.work, args.rows)
    with_dv = before.with_name("before-dv")
    shutil.rmtree(with_dv, ignore_errors=True)
    shutil.copytree(before, with_dv)
    spark.sql(f"ALTER TABLE delta.{quote(str(with_dv))} SET TBLPROPERTIES ({DELETION_VECTORS})")
    variants = {"plan": (source, plan, before), "plan+dv": (source, plan, with_dv),
                "recipe-shape": (source, recipe_shape(plan), before)}
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    table = args.work / "table"
    for round_ in range(args.rounds):
        for name, (src, p, start) in variants.items():
            shutil.rmtree(table, ignore_errors=True)
            shutil.copytree(start, table)
            began = time.monotonic()
            merge_step._run_merge(DeltaLocation(path=str(table)), src, p)
            seconds[name].append(time.monotonic() - began)
            print(f"round {round_} {name:14} {seconds[name][-1]:.2f} s", flush=True)
    warm = {name: sum(s[1:]) / max(1, len(s) - 1) for name, s in seconds.items()}
    for name, mean in warm.items():
        print(f"{name:14} warm mean {mean:.2f} s ({mean / warm['plan']:.2f}x plan)")
    spark.stop()


def capture_last_merge(spark: SparkSession, work: Path, rows: int) -> tuple[DataFrame, MergePlan, Path]:
    """The benchmark stream's batches through the handler; the last MERGE's source (saved as
    Parquet), its plan, and a copy of the table as it was before that MERGE."""
    handler, run = handler_on_copy(spark, work, rows)
    events = [value for _, value in Stream(rows).events(BATCHES * BATCH)]
    captured: dict[str, MergePlan] = {}
    real = merge_step._run_merge
    before = work / "before"

    def capture(target, src, plan):
        captured["plan"] = plan
        src.write.mode("overwrite").parquet(str(work / "source"))
        shutil.rmtree(before, ignore_errors=True)
        shutil.copytree(run / "cdc_delta" / TABLE, before)
        return real(target, src, plan)

    for i in range(BATCHES):
        if i == BATCHES - 1:
            merge_step._run_merge = capture
        handler.process(raw_records(spark, events[i * BATCH:(i + 1) * BATCH], i * BATCH), i)
    merge_step._run_merge = real
    source = spark.read.parquet(str(work / "source")).persist()
    source.count()
    return source, captured["plan"], before


def recipe_shape(plan: MergePlan) -> MergePlan:
    """The seed recipe's MERGE on the same source: the key alone, no position guard, no TOAST
    CASE (what cdc-delta's clauses cost over the recipe's, on one source and table)."""
    on = plan.on.rsplit(" AND t.", 1)[0] if " BETWEEN " in plan.on else plan.on   # the key range comes last
    return replace(plan, on=on, delete_when=f"s.{OP} = 'd'", update_when=f"s.{OP} <> 'd'",
                   update_set={c: v for c, v in plan.insert_values.items()})


if __name__ == "__main__":
    main()

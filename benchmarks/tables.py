"""The benchmark's Delta tables, through Spark: seed the starting table for each engine, and
export (id, rev, head of note) of a finished table for the comparison.

    python -m benchmarks.tables seed RUN_DIR ROWS
    python -m benchmarks.tables export TABLE_PATH OUT_PARQUET [TABLE_PATH OUT_PARQUET ...]
    python -m benchmarks.tables properties TABLE_PATH KEY=VALUE [KEY=VALUE ...]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from pyspark.sql import functions as F

from cdc_delta.batch import BatchHandler
from cdc_delta.config import parse_config
from cdc_delta.infra.session import get_spark
from cdc_delta.lake.tables import DeltaLocation, set_table_properties

from .measure import REPO, measured
from .stream import COLUMNS, NOTE_FILLER, STATUSES, TABLE

# the baselines keep Debezium's encodings of these two (as their recipes do): no decoding
PLAIN_TYPES = {**COLUMNS, "amount": "string", "updated_at": "bigint"}


def pipeline_config(run_dir: Path, topic: str, bootstrap: str, max_offsets: int,
                    trigger: dict | None = None) -> dict:
    """cdc-delta's config for a benchmark run."""
    return {"pipeline": "bench",
            "source": {"kind": "kafka", "bootstrap_servers": bootstrap, "topics": [topic],
                       "max_offsets_per_trigger": max_offsets},
            "lake": str(run_dir / "cdc_delta"), "checkpoint": str(run_dir / "cdc_delta_ck"),
            "trigger": trigger or {"kind": "available_now"},
            "tables": [{"name": TABLE, "match": {"table": TABLE}, "keys": ["id"], "columns": COLUMNS}]}


def seeded(work: Path, rows: int) -> Path:
    """`work`/seed-`rows`, seeded once (in a Spark process of its own) and reused after."""
    folder = work / f"seed-{rows}"
    if not folder.exists():
        subprocess.run([sys.executable, "-m", "benchmarks.tables", "seed", str(folder), str(rows)],
                       cwd=REPO, check=True)
    return folder


def seed_fresh(run_dir: Path, rows: int) -> Path:
    """`run_dir` emptied, then seeded (see `seed`) in a Spark process of its own, its output in
    run_dir/seed.log."""
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    run = measured([sys.executable, "-m", "benchmarks.tables", "seed", str(run_dir), str(rows)], run_dir / "seed.log")
    if run.returncode != 0:
        raise SystemExit(f"seeding failed; see {run.log}:\n" + run.log.read_text()[-3000:])
    return run_dir


def seed(run_dir: Path, rows: int) -> None:
    """The same `rows` rows (keys 0..rows-1 at rev 0) in cdc-delta's table and in the plain
    tables of the two baselines."""
    spark = get_spark("cdc-delta-bench-seed")
    base = spark.range(rows).select(
        F.col("id"), ((F.col("id") * 7919) % 100_000).alias("customer"),
        F.element_at(F.array(*[F.lit(s) for s in STATUSES]), (F.col("id") % 4 + 1).cast("int")).alias("status"),
        ((F.col("id") * 31) % 10_000_000 / 100).cast("decimal(12,2)").alias("amount"),
        F.concat(F.col("id").cast("string"), F.lit(":0:" + NOTE_FILLER)).alias("note"),
        F.lit("2026-01-01 00:00:00").cast("timestamp").alias("updated_at"), F.lit(0).cast("bigint").alias("rev"))
    config = parse_config(pipeline_config(run_dir, "unused", "127.0.0.1:1", 1))
    BatchHandler(spark, config).prepare()
    seq = F.struct(F.lit("").alias("text"), *[F.lit(0).cast("bigint").alias(p) for p in ("p1", "p2", "p3")],
                   F.lit(0).alias("stream"), F.lit("seed").alias("origin"), F.lit(0).alias("partition"),
                   F.lit(0).cast("bigint").alias("offset"), F.lit(0).alias("op_rank"))
    (base.select("*", seq.alias("_cdc_seq"), F.lit(0).cast("bigint").alias("_cdc_source_ts"))
     .write.format("delta").mode("append").save(str(run_dir / "cdc_delta" / TABLE)))
    plain = base.select(*[F.col(c).cast(t).alias(c) for c, t in PLAIN_TYPES.items()])
    plain = plain.withColumn("updated_at", F.unix_micros(F.lit("2026-01-01 00:00:00").cast("timestamp")))
    plain.write.format("delta").save(str(run_dir / "seed_recipe"))
    shutil.copytree(run_dir / "seed_recipe", run_dir / "delta_rs")
    spark.stop()


def export(pairs: list[str]) -> None:
    """TABLE OUT pairs: each table's id, rev and note head to a Parquet folder."""
    spark = get_spark("cdc-delta-bench-export")
    head = F.substring_index(F.col("note"), ":", 2)
    for table, out in zip(pairs[::2], pairs[1::2]):
        (spark.read.format("delta").load(table)
         .select("id", "rev", F.when(head == F.col("note"), F.col("note")).otherwise(F.concat(head, F.lit(":")))
                 .alias("head"))
         .coalesce(1).write.mode("overwrite").parquet(out))
    spark.stop()


def set_properties(table: str, pairs: list[str]) -> None:
    """KEY=VALUE table properties set on a seeded table (a table as cdc-delta would have
    created it with them, for an A/B of a table property)."""
    spark = get_spark("cdc-delta-bench-properties")
    set_table_properties(spark, DeltaLocation(path=table), dict(pair.split("=", 1) for pair in pairs))
    spark.stop()


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "seed":
        seed(Path(args[0]), int(args[1]))
    elif command == "export":
        export(args)
    elif command == "properties":
        set_properties(args[0], args[1:])
    else:
        raise SystemExit(f"unknown command {command!r}: seed, export or properties")

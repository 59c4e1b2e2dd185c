"""The driver's order of source positions, which decides whether a batch's guard reads the
tombstone table, agrees with Spark's order of the `_cdc_seq` struct; and the condition by which
the guard reads only the tombstones after the batch's oldest change lets every one of them by."""

from __future__ import annotations

import random

import pytest
from pyspark.sql import functions as F

from cdc_delta.frame import SEQ_TYPE
from cdc_delta.steps.position import SEQ_FIELDS, newer, oldest, possibly_after, seq_order

pytestmark = pytest.mark.spark


def random_seq(rng: random.Random) -> tuple:
    def value(kind: str):
        if rng.random() < 0.25:
            return None
        if kind == "string":
            return rng.choice(["", "0/16B3748", "0/16B37A0", "a", "ä", "z", "\U0001f600"])
        big = 2 ** 40 if kind == "bigint" else 2 ** 30
        return rng.choice([-big, -1, 0, 1, 2, 7, big])
    return tuple(value(kind) for _, kind in SEQ_FIELDS)


def test_seq_order_and_newer_agree_with_spark(spark):
    rng = random.Random(7)
    df = spark.createDataFrame([(i, random_seq(rng)) for i in range(400)], f"i int, seq {SEQ_TYPE}")
    spark_order = [r["i"] for r in df.orderBy("seq", "i").collect()]
    rows = {r["i"]: r["seq"] for r in df.collect()}
    assert sorted(rows, key=lambda i: (seq_order(rows[i]), i)) == spark_order
    pairs = df.alias("a").crossJoin(df.alias("b")).filter(F.rand(3) < 0.02)
    for r in pairs.select("a.i", "b.i", (F.col("a.seq") < F.col("b.seq")).alias("lt")).collect():
        a, b = rows[r[0]], rows[r[1]]
        assert (seq_order(a) < seq_order(b)) == r["lt"]
        assert newer(a, b) == (b if r["lt"] else a)
    assert newer(None, rows[0]) == rows[0] and newer(rows[0], None) == rows[0]


def test_possibly_after_lets_every_later_position_by(spark):
    """Checked against Spark's own order over random positions (nulls and ties in the leading
    fields included): a tombstone after the batch's oldest change is never filtered out."""
    rng = random.Random(11)
    seqs = [random_seq(rng) for _ in range(40)] + [(None,) * len(SEQ_FIELDS)]
    df = spark.createDataFrame(list(enumerate(seqs)), f"i int, seq {SEQ_TYPE}")
    rows = {r["i"]: r["seq"] for r in df.collect()}
    skipped = 0
    for i, since in rows.items():
        kept = df.filter(possibly_after(F.col("seq"), since))
        after = df.filter(F.col("seq") > F.struct(*[F.lit(since[n]).cast(k).alias(n) for n, k in SEQ_FIELDS]))
        assert after.join(kept, "i", "left_anti").count() == 0, f"a position after {since} was filtered out"
        skipped += df.count() - kept.count()
    assert skipped > 0   # and it does narrow the read
    assert oldest([None, rows[1], rows[2]]) == min(rows[1], rows[2], key=seq_order) and oldest([None]) is None

"""The driver's merge of the origins query's rows (batch/facts.py): the rows Spark groups by
schema text and image names as well come back one per topic-partition, table and schema."""

from __future__ import annotations

from pyspark.sql import Row

from cdc_delta.batch.facts import ORIGIN_KEYS, merge_origins


def origin(partition: int, names, n: int, last: int, ok: int = 1, bad: int = 0, tomb: int = 0, schema=None) -> Row:
    keys = dict(zip(ORIGIN_KEYS, ("t", partition, "", "orders" if ok else None, 7)))
    return Row(**keys, schema=schema, names=names, n=n, tomb=tomb, last=last, bad=bad, ok=ok)


def test_rows_of_one_origin_merge_into_one():
    rows = [origin(0, ["a", "id"], 5, 40), origin(0, ["b", "id"], 2, 41, schema="s", tomb=1),
            origin(0, None, 3, 39, ok=0, bad=3), origin(1, ["id"], 1, 9)]
    merged = {r[ORIGIN_KEYS[1]]: r for r in merge_origins(rows) if r[ORIGIN_KEYS[3]]}
    first = merged[0]
    assert (first["n"], first["tomb"], first["last"], first["bad"], first["schema"]) == (7, 1, 41, 0, "s")
    assert first["schema_keys"] == ["a", "b", "id"] and first["images"] == [["a", "id"], ["b", "id"]]
    assert merged[1]["schema_keys"] == ["id"]
    unrouted = [r for r in merge_origins(rows) if r[ORIGIN_KEYS[3]] is None]
    assert [(r["n"], r["bad"], r["schema_keys"]) for r in unrouted] == [(3, 3, None)]


def test_each_distinct_image_is_kept_once_for_the_clash_check():
    rows = [origin(0, ["ID", "id", "v"], 1, 1), origin(0, ["Id", "v"], 1, 2), origin(0, ["Id", "v"], 4, 3)]
    (merged,) = merge_origins(rows)
    assert merged["images"] == [["ID", "id", "v"], ["Id", "v"]]
    assert merged["schema_keys"] == ["ID", "Id", "id", "v"]


def test_applicable_events_without_an_image_give_no_names_but_not_none():
    (merged,) = merge_origins([origin(0, None, 2, 5)])
    assert merged["schema_keys"] == [] and merged["images"] == [[]]

"""History tables (stored_as: scd2). Property: random workloads (inserts, updates of tracked and
untracked columns, deletes, re-inserts, truncates, TOAST placeholders), delivered in random
batches with duplicates, late events and older windows re-sent, end in the versions a
plain-Python walk of the changes in source order gives; and the current versions equal the
current-state table fed by the same source in the same pipeline."""

from __future__ import annotations

import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from devtools.encode import EventWriter
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER
from cdc_delta.frame import END_AT, IS_CURRENT, START_AT
from cdc_delta.lake.tables import DeltaLocation

from .helpers import handler, make_config, raw_batch, table_rows
from .test_property import EXAMPLES, deliveries, encoded, reference, replay, restarts
from .test_property import workloads as property_workloads

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "v": "string", "amount": "decimal(10,2)", "note": "string"}
TRACKED = ("v", "amount")          # `note` changes the current version in place


def history_row(draw, key: int) -> dict:
    """Values from few, so that updates often change only the untracked `note`, or nothing
    tracked at all."""
    return {"id": key, "v": draw(st.sampled_from(["a", "b", None])),
            "amount": Decimal(draw(st.sampled_from([100, 250]))) / 100, "note": draw(st.sampled_from(["x", "y", None]))}


def workloads(keys: int = 3):
    return property_workloads(keys=keys, new_row=history_row)


def ordered(rows) -> list[tuple]:
    """Rows sorted with NULLs first in each column (None does not compare with values)."""
    return sorted(rows, key=lambda r: tuple((v is not None, v) for v in r))


def position(i: int) -> int:
    return 1000 + 10 * i


def reference_history(history) -> list[tuple]:
    """The versions, walked in source order: (id, v, amount, note, start, end, current)."""
    versions: list[dict] = []
    open_: dict[int, int] = {}

    def close(key: int, at: int) -> None:
        if key in open_:
            versions[open_.pop(key)]["end"] = at

    for i, (op, key, row, _) in enumerate(history):
        if op == "t":
            for k in list(open_):
                close(k, position(i))
        elif op == "d":
            close(key, position(i))
        elif key in open_ and all(versions[open_[key]]["row"][c] == row[c] for c in TRACKED):
            versions[open_[key]]["row"] = row
        else:
            close(key, position(i))
            versions.append({"row": row, "start": position(i), "end": None})
            open_[key] = len(versions) - 1
    return ordered((v["row"]["id"], v["row"]["v"], v["row"]["amount"], v["row"]["note"], v["start"], v["end"],
                    v["end"] is None) for v in versions)


def stored_history(spark, config, name: str, connector: str) -> list[tuple]:
    spec = next(t for t in config.tables if t.name == name)
    df = DeltaLocation.of(config.target_of(spec)).read(spark)
    at = lambda c: (F.col(c)["position"]["p1"] if connector == "postgresql"  # noqa: E731
                    else F.col(c)["position"]["p2"])
    rows = df.select("id", "v", "amount", "note", at(START_AT).alias("s"), at(END_AT).alias("e"), IS_CURRENT).collect()
    return ordered(tuple(r) for r in rows)


def history_config(folder: Path):
    return make_config(folder, [
        {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS},
        {"name": "items_history", "from": "items", "stored_as": "scd2",
         "track_history_except_column_list": ["note"]}])


def assert_history_matches(spark, data, connector, history, batches):
    with tempfile.TemporaryDirectory() as tmp:
        config = history_config(Path(tmp))
        replay(spark, data, config, encoded(data, connector, "items", COLUMNS, history), batches)
        assert stored_history(spark, config, "items_history", connector) == reference_history(history)
        current = ordered(r[:4] for r in reference_history(history) if r[6])
        assert current == ordered(tuple(r.values()) for r in table_rows(spark, config, "items"))
        assert [dict(zip(COLUMNS, r)) for r in current] == reference(history)


@settings(max_examples=max(1, EXAMPLES * 5 // 8), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), connector=st.sampled_from(["postgresql", "mysql"]))
def test_history_of_random_deliveries_matches_reference(spark, data, connector):
    history = data.draw(workloads())
    assert_history_matches(spark, data, connector, history, data.draw(deliveries(history)))


@settings(max_examples=max(1, EXAMPLES // 4), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_history_under_connector_restarts_matches_reference(spark, data):
    """Every batch led by an older window sent again: late and duplicate changes throughout."""
    history = data.draw(workloads(keys=2))
    assert_history_matches(spark, data, "postgresql", history, data.draw(restarts(history)))


PG = EventWriter("postgresql", "items", COLUMNS)


def item(key: int, v: str | None = "a", amount: str = "1.00", note: str | None = "x") -> dict:
    return {"id": key, "v": v, "amount": Decimal(amount), "note": note}


def newest_history_commit(config) -> str:
    spec = next(t for t in config.tables if t.name == "items_history")
    return next(DeltaLocation.of(config.target_of(spec)).commits_newest_first())["operation"]


FIRST_BATCH = [
    PG.event("c", None, item(1), 100, 1),
    PG.event("u", None, item(1, note="y"), 110, 2),                    # untracked: same version
    PG.event("u", None, item(1, v="b", note=TOAST_PLACEHOLDER), 120, 3),  # tracked: a new one, note 'y'
    PG.event("c", None, item(2), 130, 4),
    PG.event("d", item(2), None, 140, 5),
    PG.event("u", None, item(3, note=TOAST_PLACEHOLDER), 150, 6),      # no value known: NULL
]
FIRST_VERSIONS = [(1, "a", Decimal("1.00"), "y", 100, 120, False), (1, "b", Decimal("1.00"), "y", 120, None, True),
                  (2, "a", Decimal("1.00"), "x", 130, 140, False), (3, "a", Decimal("1.00"), None, 150, None, True)]


def test_a_first_batch_of_history_is_appended_as_the_merge_would_write_it(spark, tmp_path):
    config = history_config(tmp_path)
    h = handler(spark, config)
    report, _ = h.process(raw_batch(spark, FIRST_BATCH), 0)
    assert newest_history_commit(config) == "WRITE"
    assert (report.tables["items_history"].written_by, report.tables["items_history"].versions_written) == ("appended", 4)
    assert stored_history(spark, config, "items_history", "postgresql") == ordered(FIRST_VERSIONS)
    # a late change of key 1 lands between its versions: merged, the versions re-linked
    report, _ = h.process(raw_batch(spark, [PG.event("u", None, item(1, v="c"), 115, 2)], first_offset=6), 1)
    assert newest_history_commit(config) == "MERGE" and report.tables["items_history"].written_by == "merged"
    assert stored_history(spark, config, "items_history", "postgresql") == ordered([
        (1, "a", Decimal("1.00"), "y", 100, 115, False), (1, "c", Decimal("1.00"), "x", 115, 120, False),
        (1, "b", Decimal("1.00"), "x", 120, None, True), *FIRST_VERSIONS[2:]])


def test_a_replayed_first_batch_of_history_writes_no_version_twice(spark, tmp_path):
    config = history_config(tmp_path)
    handler(spark, config).process(raw_batch(spark, FIRST_BATCH), 0)
    # a crash before the checkpoint: the next run starts afresh and replays the batch
    report, _ = handler(spark, config).process(raw_batch(spark, FIRST_BATCH), 0)
    assert report.tables["items_history"].written_by == "merged"
    assert (report.tables["items_history"].versions_written, report.tables["items_history"].versions_removed) == (0, 0)
    assert stored_history(spark, config, "items_history", "postgresql") == ordered(FIRST_VERSIONS)

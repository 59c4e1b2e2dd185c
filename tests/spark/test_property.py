"""Property: random workloads, delivered with duplicates, redeliveries of older events and of older
windows after newer ones, arbitrary batch boundaries, restarts of the process between batches, and
MERGEs that mark the rows they replace (deletion vectors) or copy files, end in the same table as
a plain-Python replay in source order. Updates that leave the TOASTable text `v` unchanged send
Postgres' placeholder for it, under REPLICA IDENTITY DEFAULT (no `before`) or FULL (`before` holds
the old row, its text itself sometimes a placeholder); `v` is often NULL; keys are deleted and
inserted again. Each event is encoded as one of the ways real streams send it: with or without the
schema wrapper, decimals (of 2 and of 16 places) as base64 bytes or JSON numbers, field names as
configured or in upper case. Spark runs the batches' expressions compiled or interpreted, as each
process draws."""

from __future__ import annotations

import os
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.encode import EventWriter, encode_value
from cdc_delta.batch.codegen import INTERPRET_BELOW
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER

from .helpers import TIMESTAMP_EDGES, handler, make_config, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "v": "string", "amount": "decimal(10,2)", "at": "timestamp", "rate": "decimal(18,16)"}
# unscaled values of `rate` where a decoder's bytes change length or sign, and its extremes
RATE_EDGES = [0, 1, -1, 127, -128, 128, -129, 32767, -32769, 10**18 - 1, -(10**18 - 1)]
KEYS = 4


def items_row(draw, key: int) -> dict:
    return {"id": key, "v": draw(st.sampled_from(["a", "b", "", None, None, "ü"])),
            "amount": Decimal(draw(st.integers(-10**6, 10**6))) / 100,
            "at": draw(st.one_of(st.sampled_from(TIMESTAMP_EDGES), st.datetimes())),
            "rate": Decimal(draw(st.one_of(st.sampled_from(RATE_EDGES), st.integers(-(10**18 - 1), 10**18 - 1)))
                            ).scaleb(-16)}


@st.composite
def workloads(draw, keys: int = KEYS, truncates: bool = True, new_row=items_row):
    """A valid source history: (op, key, row, image) in commit order; `image` is the event's
    (before, after) as Postgres sends it, TOAST placeholders included; `new_row(draw, key)`
    draws a row's values."""
    rows: dict[int, dict] = {}
    history = []
    for _ in range(draw(st.integers(3, 24))):
        if truncates and draw(st.integers(0, 15)) == 0:
            history.append(("t", None, None, None))
            rows = {}
            continue
        key = draw(st.integers(0, keys - 1))
        row = new_row(draw, key)
        if key not in rows:
            history.append(("c", key, row, (None, row)))
            rows[key] = row
        elif draw(st.integers(0, 3)) > 0:
            history.append(("u", key, *_update(draw, rows[key], row)))
            rows[key] = history[-1][2]
        else:
            history.append(("d", key, {"id": key}, ({"id": key}, None)))
            del rows[key]
    return history


def _update(draw, old: dict, new: dict) -> tuple[dict, tuple[dict | None, dict]]:
    """The new row and the event's images: two updates in three leave `v` unchanged and send the
    placeholder for it; `before` is absent (DEFAULT) or the old row (FULL), whose `v` may itself
    be a placeholder."""
    if draw(st.integers(0, 2)) == 0:
        return new, (None, new)
    row = {**new, "v": old["v"]}
    after = {**new, "v": TOAST_PLACEHOLDER}
    identity = draw(st.sampled_from(["default", "full", "full-unavailable"]))
    before = {"default": None, "full": old, "full-unavailable": {**old, "v": TOAST_PLACEHOLDER}}[identity]
    return row, (before, after)


def reference(history) -> list[dict]:
    table: dict[int, dict] = {}
    for op, key, row, _ in history:
        if op == "t":
            table.clear()
        elif op == "d":
            table.pop(key, None)
        else:
            table[key] = row
    return [table[k] for k in sorted(table)]


@st.composite
def deliveries(draw, history):
    """Per-key order kept; duplicates; batch boundaries; and, as after a connector restart,
    events of earlier batches re-sent in later ones with new offsets."""
    streams: dict[object, list[int]] = {}
    for i, (_, key, _, _) in enumerate(history):
        streams.setdefault(key, []).append(i)
    order: list[int] = []
    while any(streams.values()):
        key = draw(st.sampled_from([k for k, v in streams.items() if v]))
        order.append(streams[key].pop(0))
        if draw(st.integers(0, 5)) == 0:
            order.append(order[-1])  # duplicate
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(order) - 1)), min_size=1, max_size=3))))
    bounds = [0, *cuts, len(order)]
    batches = [order[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    for n in range(1, len(batches)):
        earlier = [i for b in batches[:n] for i in b]
        if len(earlier) > 1 and draw(st.booleans()):   # an older window, re-sent in its order
            end = draw(st.integers(1, len(earlier) - 1))
            resent = earlier[draw(st.integers(max(0, end - 8), end - 1)):end]
        else:
            resent = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=5))
        at = draw(st.integers(0, len(batches[n])))
        batches[n] = batches[n][:at] + resent + batches[n][at:]
    return batches


# examples per property (CDC_DELTA_PROPERTY_EXAMPLES=50 for a longer search); each example is a
# few batches through Spark and Delta, about 15-25 s here
EXAMPLES = int(os.environ.get("CDC_DELTA_PROPERTY_EXAMPLES", "8"))


@settings(max_examples=max(1, EXAMPLES * 3 // 4), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), connector=st.sampled_from(["postgresql", "mysql"]))
def test_random_workloads_match_reference(spark, data, connector):
    history = data.draw(workloads())
    assert_replay_matches(spark, data, connector, history, data.draw(deliveries(history)))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_toast_under_connector_restarts_matches_reference(spark, data):
    """Few keys, many placeholders, and every batch led by an older window sent again: the value
    carried into a placeholder never comes from a change older than the stored row."""
    history = data.draw(workloads(keys=2, truncates=False))
    assert_replay_matches(spark, data, "postgresql", history, data.draw(restarts(history)))


def assert_replay_matches(spark, data, connector, history, batches):
    with tempfile.TemporaryDirectory() as tmp:
        config = make_config(Path(tmp), [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}])
        unresolved = replay(spark, data, config, encoded(data, connector, "items", COLUMNS, history), batches)
        assert table_rows(spark, config, "items", micros=["at"]) == [
            {**row, "at": encode_value(row["at"], "timestamp")} for row in reference(history)]
        # every key's history starts with its insert, so each placeholder has a value to take
        assert unresolved == 0


def encoded(data, connector: str, table: str, columns: dict, history) -> list[str]:
    """The history as Debezium events, each with or without the schema wrapper, its decimals as
    base64 bytes or JSON numbers, its field names as configured or in upper case; position
    1000 + 10 i, and many changes share one ts_ms."""
    writers = [EventWriter(connector, table, columns, wrapped=w, decimals=d, upper_case_fields=u)
               for w in (False, True) for d in ("base64", "numeric") for u in (False, True)]
    events = []
    for i, (op, key, row, image) in enumerate(history):
        writer = data.draw(st.sampled_from(writers))
        position, ts = 1000 + 10 * i, 5000 + i // 4
        events.append(writer.truncate(position, ts) if op == "t" else writer.event(op, *image, position, ts))
    return events


def replay(spark, data, config, events: list[str], batches) -> int:
    """The batches through the handler; between some, the process restarts (a new handler:
    what it kept in the driver is gone). Each process runs Spark's expressions compiled or
    interpreted (batch/codegen.py). Returns the TOAST placeholders the batches counted as
    unresolved."""
    setting = spark.conf.get(INTERPRET_BELOW)
    try:
        h = process(spark, data, config)
        offset = unresolved = 0
        for batch_id, batch in enumerate(batches):
            if batch_id and data.draw(st.integers(0, 3)) == 0:
                h = process(spark, data, config)
            report, _ = h.process(raw_batch(spark, [events[i] for i in batch], first_offset=offset), batch_id)
            unresolved += sum(t.toast_unresolved for t in report.tables.values())
            assert h.codegen.interpreted == (spark.conf.get(INTERPRET_BELOW) != "1")
            offset += len(batch)
        return unresolved
    finally:
        spark.conf.set(INTERPRET_BELOW, setting)


def process(spark, data, config):
    """A new handler, as a new process has, compiling every batch or interpreting every one, its
    MERGEs copying the files they touch as the rule chooses (sinks/current_state/rewrite.py:
    nearly always, in tables this small) or marking the rows they replace every time."""
    spark.conf.set(INTERPRET_BELOW, data.draw(st.sampled_from(["1", "1000000"])))
    h = handler(spark, config)
    if data.draw(st.booleans()):
        for sink in h.table_sinks("items"):
            if getattr(sink, "rewrite", None) is not None:
                sink.rewrite.copies = lambda changes: False
    return h


@st.composite
def restarts(draw, history):
    """As a connector that restarts often: small batches in source order, each after the first
    led by an older window of what was already delivered (sent again with new offsets)."""
    order = list(range(len(history)))
    batches, at = [], 0
    while at < len(order):
        size = draw(st.integers(1, 3))
        batch = order[at:at + size]
        if batches:
            end = draw(st.integers(1, at))
            batch = order[draw(st.integers(max(0, end - 6), end - 1)):end] + batch
        batches.append(batch)
        at += size
    return batches

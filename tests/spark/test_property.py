"""Property: random workloads, delivered with duplicates, redeliveries of older events and
arbitrary batch boundaries, end in the same table as a plain-Python replay in source order."""

from __future__ import annotations

import datetime as dt
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_delta.debezium.encode import EventWriter

from .helpers import handler, make_config, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "v": "string", "amount": "decimal(10,2)", "at": "timestamp"}
KEYS = 4


@st.composite
def workloads(draw):
    """A valid source history: (op, key, row) in commit order."""
    exists: dict[int, bool] = {}
    history = []
    for _ in range(draw(st.integers(3, 24))):
        if draw(st.integers(0, 15)) == 0:
            history.append(("t", None, None))
            exists = {}
            continue
        key = draw(st.integers(0, KEYS - 1))
        row = {"id": key, "v": draw(st.sampled_from(["a", "b", "", None, "ü"])),
               "amount": Decimal(draw(st.integers(-10**6, 10**6))) / 100,
               "at": dt.datetime(2020, 1, 1) + dt.timedelta(microseconds=draw(st.integers(0, 10**12)))}
        if not exists.get(key):
            history.append(("c", key, row))
            exists[key] = True
        elif draw(st.integers(0, 3)) > 0:
            history.append(("u", key, row))
        else:
            history.append(("d", key, {"id": key}))
            exists[key] = False
    return history


def reference(history) -> list[dict]:
    table: dict[int, dict] = {}
    for op, key, row in history:
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
    for i, (_, key, _) in enumerate(history):
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
        resent = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=5))
        at = draw(st.integers(0, len(batches[n])))
        batches[n] = batches[n][:at] + resent + batches[n][at:]
    return batches


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data(), connector=st.sampled_from(["postgresql", "mysql"]))
def test_random_workloads_match_reference(spark, data, connector):
    history = data.draw(workloads())
    batches = data.draw(deliveries(history))
    writers = [EventWriter(connector, "items", COLUMNS, wrapped=w) for w in (False, True)]
    events = []
    for i, (op, key, row) in enumerate(history):
        writer = writers[data.draw(st.booleans())]
        position, ts = 1000 + 10 * i, 5000 + i // 4   # many changes share one ts_ms
        if op == "t":
            events.append(writer.truncate(position, ts))
        elif op == "d":
            events.append(writer.event("d", row, None, position, ts))
        else:
            events.append(writer.event(op, None, row, position, ts))
    with tempfile.TemporaryDirectory() as tmp:
        config = make_config(Path(tmp), [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}])
        h = handler(spark, config)
        offset = 0
        for batch_id, batch in enumerate(batches):
            h.process(raw_batch(spark, [events[i] for i in batch], first_offset=offset), batch_id)
            offset += len(batch)
        assert table_rows(spark, config, "items") == reference(history)

"""Identifiers are quoted everywhere: reserved words, spaces and backticks in column names work
as keys and values, and a name can not smuggle SQL into a statement."""

from __future__ import annotations

import pytest

from devtools.encode import EventWriter
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER

from .helpers import handler, make_config, raw_batch, table_rows

pytestmark = pytest.mark.spark
HOSTILE = "x`); DROP TABLE t; --"
COLUMNS = {"order": "bigint", "select": "string", "a b": "string", "we`ird": "bigint", HOSTILE: "string"}
PG = EventWriter("postgresql", "odd", COLUMNS)


def row(k, text="s", n=1):
    return {"order": k, "select": text, "a b": f"{text} {k}", "we`ird": n, HOSTILE: "h"}


def test_reserved_spaced_and_backticked_names(spark, tmp_path):
    config = make_config(tmp_path, [{"name": "odd", "match": {"table": "odd"}, "keys": ["order", "we`ird"],
                                     "columns": COLUMNS}])
    h = handler(spark, config)
    h.process(raw_batch(spark, [PG.event("c", None, row(1), 10, 1), PG.event("c", None, row(2), 11, 1),
                                PG.event("c", None, row(3), 12, 1)]), 0)
    h.process(raw_batch(spark, [
        PG.event("u", None, row(1, "v2"), 20, 2),
        PG.event("u", None, {**row(2), "select": TOAST_PLACEHOLDER, "a b": "kept"}, 21, 2),
        PG.event("d", {"order": 3, "we`ird": 1}, None, 22, 2),
    ], first_offset=3), 1)
    assert table_rows(spark, config, "odd") == [
        {"order": 1, "select": "v2", "a b": "v2 1", "we`ird": 1, HOSTILE: "h"},
        {"order": 2, "select": "s", "a b": "kept", "we`ird": 1, HOSTILE: "h"},
    ]

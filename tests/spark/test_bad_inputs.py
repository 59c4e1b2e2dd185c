"""A corpus of bad events in one batch with good ones: each bad event is quarantined once with
its own reason, the good events of the same batch are applied, and nothing is lost."""

from __future__ import annotations

import json

import pytest

from cdc_delta.debezium.encode import EventWriter, decimal_b64

from .helpers import handler, make_config, quarantine_rows, raw_batch, table_rows

pytestmark = pytest.mark.spark
COLUMNS = {"id": "bigint", "note": "string", "amount": "decimal(10,2)", "day": "date"}
PG = EventWriter("postgresql", "items", COLUMNS)


def good(i: int, note: str = "ok") -> str:
    return PG.event("c", None, {"id": i, "note": note, "amount": 1, "day": None}, 1000 + i, 1)


def envelope(**changes) -> str:
    event = json.loads(good(50))
    for path, value in changes.items():
        node = event
        *parents, leaf = path.split("__")
        for p in parents:
            node = node[p]
        if value is KeyError:
            node.pop(leaf)
        else:
            node[leaf] = value
    return json.dumps(event)


BAD = [
    ('{"before":null,"after":{"id":1', "malformed JSON"),
    ("[1,2,3]", "malformed JSON"),
    (b'{"op":"c","after":{"id":2,"note":"\xff\xfe"}}', "value is not valid UTF-8"),
    (envelope(after="not an object"), "not a Debezium envelope"),
    ("{}", "no 'op' field"),
    (envelope(op=KeyError), "no 'op' field"),
    (envelope(op="x"), "unknown op 'x'; allowed: c, u, d, r, t, m"),
    (envelope(after__id=None), "key column 'id' is null or missing in 'after'"),
    (envelope(after__id=KeyError), "key column 'id' is null or missing in 'after'"),
    (envelope(source__lsn=None, source__sequence=None), "missing source position: source.lsn (postgresql)"),
    (envelope(source__connector="db2"), "unknown connector 'db2' and no sequence_by"),
    (envelope(source=KeyError), "no 'source' block"),
    (envelope(op="u", after=None), "op 'u' without an 'after' image"),
    (envelope(op="d", before=None, after=None), "REPLICA IDENTITY"),
    (envelope(after__id=10**30), "column 'id': value '1000000000000000000000000000000' does not decode as bigint"),
    (envelope(after__id="seven"), "column 'id': value 'seven' does not decode as bigint"),
    (envelope(after__amount="%%%"), "column 'amount': value '%%%' does not decode as decimal(10,2)"),
    (envelope(after__amount=decimal_b64(__import__("decimal").Decimal("123456789.12"), 2)), "does not decode as decimal(10,2)"),
    (envelope(after__day="yesterday"), "column 'day': value 'yesterday' does not decode as date"),
    (envelope(source__table="elsewhere"), "no configured table matches"),
]


def test_bad_events_quarantined_with_reasons_good_events_applied(spark, tmp_path):
    config = make_config(tmp_path, [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}])
    h = handler(spark, config)
    big_note = "x" * 2_000_000
    values = [good(1)] + [v for v, _ in BAD] + [good(2, big_note), None, good(3)]
    report, _ = h.process(raw_batch(spark, values), 0)

    quarantined = quarantine_rows(spark, config)
    assert [q["offset"] for q in quarantined] == list(range(1, len(BAD) + 1))
    for q, (value, reason) in zip(quarantined, BAD):
        assert reason in q["reason"], (q["offset"], q["reason"])
        raw = value if isinstance(value, bytes) else value.encode()
        assert bytes(q["value"]) == raw and q["batch_id"] == 0 and q["pipeline"] == "t"
    assert [q["table"] for q in quarantined[:6]] == [None, None, None, "items", None, "items"]

    rows = table_rows(spark, config, "items")
    assert [r["id"] for r in rows] == [1, 2, 3] and rows[1]["note"] == big_note
    assert (report.records_in, report.quarantined, report.kafka_tombstones) == (len(values), len(BAD), 1)
    assert report.tables["items"].inserted == 3 and report.skipped == 0

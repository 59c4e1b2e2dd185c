"""A corpus of bad and hostile events (58 kinds) in one batch with good ones: each bad event is
quarantined once with its own reason and its raw bytes, the good events of the same batch are
applied, and nothing is lost. A value over decoding.max_value_bytes is not parsed at all."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

from devtools.encode import EventWriter, decimal_b64

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
    # hostile shapes and sizes
    ('{"a":' * 3000 + "1" + "}" * 3000, "malformed JSON"),                                  # deep nesting
    (good(50).replace('"note":"ok"', '"note":' + '{"a":' * 3000 + "1" + "}" * 3000), "malformed JSON"),
    (good(50).replace('"note":"ok"', '"note":"' + "y" * 10_000_000 + '"'), "over decoding.max_value_bytes"),
    ("", "no 'op' field"),
    (good(50)[:-1] + ',"op":"d"}', "a key appears twice in one object"),                      # duplicate keys
    (good(50).replace('"id":50', '"id":50,"id":51'), "a key appears twice in one object"),
    (good(50).replace('"connector":', '"lsn":1,"connector":'), "a key appears twice in one object"),
    (good(50).replace('"id":50', '"id":NaN'), "bare NaN/Infinity"),
    (good(50) + " trailing", "text follows the JSON object"),
    (good(50) + good(50), "text follows the JSON object"),
    (good(50) + "," + good(50), "text follows the JSON object"),
    (good(50) + "]junk", "text follows the JSON object"),        # a bracket would end a wrapping array
    (good(50) + "]", "text follows the JSON object"),
    ("null", "malformed JSON"),
    ('"hello"', "malformed JSON"),
    ("42", "malformed JSON"),
    ("\ufeff" + good(50), "malformed JSON"),                                                 # byte-order mark
    (b"\x00\x00", "malformed JSON"),
    (json.dumps({"schema": {"type": "struct"}, "payload": None}), "no 'op' field"),
    (json.dumps({"schema": {"type": "struct"}, "payload": "x"}), "not a Debezium envelope"),
    (envelope(source="s"), "not a Debezium envelope"),
    (envelope(op="d", before=[1], after=None), "not a Debezium envelope"),
    (envelope(op=""), "unknown op ''"),
    (envelope(op=None), "no 'op' field"),
    (envelope(op=1), "unknown op '1'"),
    (envelope(op="c", after=None), "op 'c' without an 'after' image"),
    (envelope(op="r", after=None), "op 'r' without an 'after' image"),
    (envelope(source__lsn="abc", source__sequence=None), "missing source position"),
    # values of the wrong type or out of range for the declared column
    (envelope(after__id=1.5), "value '1.5' does not decode as bigint"),
    (envelope(after__id=True), "value 'true' does not decode as bigint"),
    (envelope(after__id=[1, 2]), "value '[1,2]' does not decode as bigint"),
    (envelope(after__id={"x": 1}), """value '{"x":1}' does not decode as bigint"""),
    (envelope(after__id=""), "value '' does not decode as bigint"),
    (envelope(after__id=-10**30), "does not decode as bigint"),
    (good(50).replace('"id":50', '"id":1e400'), "does not decode as bigint"),
    (envelope(after__amount="NaN"), "value 'NaN' does not decode as decimal(10,2)"),               # not base64
    (envelope(after__day=10**12), "does not decode as date"),
    (envelope(after__day=-10**9), "does not decode as date"),                                    # before year 1
]


def test_bad_events_quarantined_with_reasons_good_events_applied(spark, tmp_path):
    assert len(BAD) >= 40 and len({reason for _, reason in BAD}) >= 25
    config = make_config(tmp_path, [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}],
                         decoding={"max_value_bytes": 5_000_000})
    h = handler(spark, config)
    big_note = "x" * 2_000_000
    values = [good(1)] + [v for v, _ in BAD] + [good(2, big_note), None, good(3) + " \n"]  # whitespace after is fine
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


def test_bad_changes_of_one_origin_keep_their_own_values(spark, tmp_path):
    """A frame of the user's own whose records share a position: the decode keeps no value of a
    good-looking record, and the quarantine reads a bad change's value again from the batch by
    its origin and the value's hash, so each bad event keeps its own bytes (twice when sent twice)."""
    config = make_config(tmp_path, [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}])
    seven, money = envelope(after__id="seven"), envelope(after__amount="%%%")
    values = [good(1), seven, money, "[1,2,3]", seven, good(2)]
    report, _ = handler(spark, config).process(raw_batch(spark, values).withColumn("offset", F.lit(7).cast("bigint")), 0)

    quarantined = sorted((bytes(q["value"]).decode(), q["reason"], q["table"]) for q in quarantine_rows(spark, config))
    assert [(value, table) for value, _, table in quarantined] == sorted(
        [("[1,2,3]", None), (money, "items"), (seven, "items"), (seven, "items")])
    expected = {seven: "value 'seven' does not decode as bigint", money: "does not decode as decimal(10,2)",
                "[1,2,3]": "malformed JSON"}
    assert all(expected[value] in reason for value, reason, _ in quarantined), quarantined
    assert report.quarantined == 4 and [r["id"] for r in table_rows(spark, config, "items")] == [1, 2]


def test_a_batch_read_again_under_another_app_id_quarantines_no_event_twice(spark, tmp_path):
    """A lost checkpoint: the run starts under a new app id and reads the batch again."""
    config = make_config(tmp_path, [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}])
    values = [good(1), "[1,2,3]", good(2), '{"op":"x"}']
    handler(spark, config).process(raw_batch(spark, values), 0)
    report, _ = handler(spark, config).process(raw_batch(spark, values), 0, app_id="after-a-lost-checkpoint")
    assert report.quarantined == 2
    assert [(q["offset"], q["batch_id"]) for q in quarantine_rows(spark, config)] == [(1, 0), (3, 0)]

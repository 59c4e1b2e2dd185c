"""The change frame's contract: the columns every step of a batch reads and writes, and the
position type. No pyspark here: the config checks and unit tests import it without a JVM.

Raw input (what every source gives a batch, one row per Kafka record):
    value, topic, partition, offset, origin (a file, for files), kafka_ts; optional old_key,
    the text of Debezium's `__debezium.oldkey` header (on the create after a key change)
Origin columns carried from the record to the change (and into the quarantine):
    _cdc_value, _cdc_topic, _cdc_partition, _cdc_offset, _cdc_origin, _cdc_kafka_ts
Stored with each row of a table: _cdc_seq (the position, SEQ_TYPE) and _cdc_source_ts.
"""

from __future__ import annotations

RAW_COLUMNS = ("value", "topic", "partition", "offset", "origin", "kafka_ts")
ORIGIN_COLUMNS = ("_cdc_value", "_cdc_topic", "_cdc_partition", "_cdc_offset", "_cdc_origin", "_cdc_kafka_ts")

# the total order of changes per key, compared field by field (debezium/order.py builds it)
SEQ_TYPE = ("struct<text:string,p1:bigint,p2:bigint,p3:bigint,stream:int,origin:string,"
            "partition:int,offset:bigint,op_rank:int>")
SEQ_COLUMN, TS_COLUMN = "_cdc_seq", "_cdc_source_ts"
# cdc-delta's own columns and companion tables begin with this; user columns never do
PREFIX = "_cdc_"


def toast_column(column: str) -> str:
    """A reduced change's note of where the value of `column` came from when its last change
    sent a TOAST placeholder (null when it did not): {seq: the donor change's position, or
    null; known: that change had a value}."""
    return f"{PREFIX}toast_{column}"

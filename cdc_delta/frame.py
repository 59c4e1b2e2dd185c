"""The change frame's contract: the columns every step of a batch reads and writes, and the
position type. No pyspark here: the config checks and unit tests import it without a JVM.

Raw input (what every source gives a batch, one row per Kafka record):
    value, topic, partition, offset, origin (a file, for files), kafka_ts; optional old_key,
    the text of Debezium's `__debezium.oldkey` header (on the create after a key change)
Decoded records (steps/decode.py): the origin columns (the raw value only where something reads
it: a record bad as an envelope, a table with a route of whole events; elsewhere the value's hash,
by which the quarantine reads it again), the envelope, the table it routes to.
A table's changes (steps/changes.py): origin columns (the raw value as in the decoded records;
the hash where the change is bad), the key and value columns by their own names, a
flag per value column still a TOAST placeholder, op, position, source time, error.
Stored with each row of a table: SEQ_COLUMN (the position, SEQ_TYPE) and TS_COLUMN.

Every name cdc-delta adds begins with PREFIX; user columns never do. A step's own working
columns are `scratch(...)` names, dropped before the step returns.
"""

from __future__ import annotations

PREFIX = "_cdc_"

RAW_COLUMNS = ("value", "topic", "partition", "offset", "origin", "kafka_ts")
RAW_SCHEMA = "value binary, topic string, partition int, offset bigint, origin string, kafka_ts timestamp"
RAW_OLD_KEY = "old_key"

# carried from the record to the change (and into the quarantine)
VALUE, TOPIC, PARTITION, OFFSET, ORIGIN, KAFKA_TS = ORIGIN_COLUMNS = tuple(f"{PREFIX}{c}" for c in RAW_COLUMNS)

# the raw value's hash: with the origin columns, the key that finds the value again (quarantine.py)
VALUE_HASH = f"{PREFIX}value_hash"

# the envelope (debezium/envelope.py)
IS_TOMBSTONE = f"{PREFIX}is_tombstone"      # a Kafka tombstone (null value)
OP = f"{PREFIX}op"
BEFORE, AFTER = f"{PREFIX}before", f"{PREFIX}after"     # row images, map<string,variant>
SOURCE = f"{PREFIX}source"                  # the source block, map<string,string>
ENVELOPE_TS = f"{PREFIX}envelope_ts"
SCHEMA, SCHEMA_ID = f"{PREFIX}schema", f"{PREFIX}schema_id"   # the wrapper's schema text, its hash
OLD_KEY = f"{PREFIX}old_key"                # the previous key's fields after a key change
ERROR = f"{PREFIX}error"                    # the first reason the record can not apply, or null
TABLE = f"{PREFIX}table"                    # the configured table it routes to

# the total order of changes per key, compared field by field (debezium/order.py builds it)
SEQ_TYPE = ("struct<text:string,p1:bigint,p2:bigint,p3:bigint,stream:int,origin:string,"
            "partition:int,offset:bigint,op_rank:int>")
SEQ_COLUMN, TS_COLUMN = f"{PREFIX}seq", f"{PREFIX}source_ts"

# a history table's (scd2) own columns, named as Databricks' AUTO CDC names them: where a version
# starts and ends, each the change's position and source time (END_AT null while current)
START_AT, END_AT, IS_CURRENT = "__START_AT", "__END_AT", "__IS_CURRENT"
BOUNDARY_TYPE = f"struct<position:{SEQ_TYPE},source_ts:timestamp>"
HISTORY_COLUMNS = f"`{START_AT}` {BOUNDARY_TYPE}, `{END_AT}` {BOUNDARY_TYPE}, `{IS_CURRENT}` boolean"


def unavailable(column: str) -> str:
    """A change's flag: its value of `column` is a TOAST placeholder no image of its own answers."""
    return f"{PREFIX}u_{column}"


def previous_key(key: str) -> str:
    """On a create that follows a primary-key change, the previous value of key column `key`."""
    return f"{PREFIX}ok_{key}"


def toast_column(column: str) -> str:
    """A reduced change's note of where the value of `column` came from when its last change
    sent a TOAST placeholder (null when it did not): {seq: the donor change's position, or
    null; known: that change had a value}."""
    return f"{PREFIX}toast_{column}"


def scratch(*parts: object) -> str:
    """A working column of one step, e.g. scratch("a", 3) -> `_cdc_a_3`."""
    return PREFIX + "_".join(str(p) for p in parts)


def companion_folder(suffix: str) -> str:
    """The folder of a path table's companion table (tombstones, truncates, …)."""
    return f"{PREFIX}{suffix}"


def companion_name(table: str, suffix: str) -> str:
    """The catalog name of a catalog table's companion table."""
    return f"{table}_{PREFIX}{suffix}"


def is_own_column(name: str) -> bool:
    return name.startswith(PREFIX)

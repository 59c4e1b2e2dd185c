"""A total order of changes per key, from each connector's source position.

The position (frame.SEQ_COLUMN) is a struct compared field by field:
    text, p1, p2, p3  the source position (per connector, or the table's ``sequence_by``)
    stream            0 for snapshot reads, 1 for streaming changes: snapshots rank below
                      any streaming change at the same position
    origin, partition, offset   where the record was read: deterministic tie-break
    op_rank           op precedence for what is still tied
It never uses arrival time alone: a connector restart re-sends old events with new offsets,
and those keep their old position.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..frame import ENVELOPE_TS, OFFSET, ORIGIN, PARTITION, SEQ_TYPE  # noqa: F401 (SEQ_TYPE: what seq_struct builds)

SNAPSHOT_MARKS = ("true", "last", "first", "first_in_data_collection", "last_in_data_collection")
OP_RANK = {"r": 0, "c": 1, "u": 2, "d": 3, "t": 4, "m": 5}
KNOWN_CONNECTORS = ("postgresql", "mysql", "mariadb", "sqlserver", "oracle")


@dataclass(frozen=True)
class Position:
    """Source position columns and the reason a record lacks one (null when it has it)."""

    text: Column
    parts: tuple[Column, Column, Column]
    missing: Column


def source_position(source: Column, sequence_by: list[str] | None, after_value) -> Position:
    """Position of a record from its ``source`` map, or from the table's ``sequence_by``."""
    if sequence_by:
        return _sequence_by_position(source, sequence_by, after_value)
    s = lambda k: source.getItem(k)  # noqa: E731
    num = lambda k: s(k).try_cast("bigint")  # noqa: E731
    connector = s("connector")
    pg_lsn = F.coalesce(num("lsn"), F.get_json_object(s("sequence"), "$[1]").try_cast("bigint"))
    binlog_no = F.when(s("file") == "", F.lit(0).cast("bigint")).otherwise(
        F.regexp_extract(s("file"), r"(\d+)$", 1).try_cast("bigint"))
    zero = F.lit(0).cast("bigint")
    is_pg, is_my = connector == "postgresql", connector.isin("mysql", "mariadb")
    is_ms, is_ora = connector == "sqlserver", connector == "oracle"
    text = F.when(is_ms, F.concat_ws("|", s("commit_lsn"), s("change_lsn"))).otherwise(F.lit(""))
    p1 = (F.when(is_pg, pg_lsn).when(is_my, binlog_no).when(is_ms, num("event_serial_no"))
          .when(is_ora, F.coalesce(num("scn"), num("commit_scn"))))
    p2 = F.when(is_my, num("pos")).otherwise(zero)
    p3 = F.when(is_my, F.coalesce(num("row"), zero)).otherwise(zero)
    missing = (
        F.when(source.isNull(), F.lit("no 'source' block: the event has no source position"))
        .when(~connector.isin(*KNOWN_CONNECTORS) | connector.isNull(), F.format_string(
            "unknown connector '%s' and no sequence_by: set sequence_by for this table "
            "(connectors with a built-in order: %s)", F.coalesce(connector, F.lit("null")),
            F.lit(", ".join(KNOWN_CONNECTORS))))
        .when(is_pg & pg_lsn.isNull(), F.lit("missing source position: source.lsn (postgresql)"))
        .when(is_my & (binlog_no.isNull() | p2.isNull()),
              F.lit("missing source position: source.file and source.pos (mysql binlog)"))
        .when(is_ms & (s("commit_lsn").isNull() | s("change_lsn").isNull()),
              F.lit("missing source position: source.commit_lsn and change_lsn (sqlserver)"))
        .when(is_ora & p1.isNull(), F.lit("missing source position: source.scn (oracle)"))
    )
    return Position(text, (p1, p2, p3), missing)


def _sequence_by_position(source: Column, paths: list[str], after_value) -> Position:
    parts: list[Column] = []
    missing = F.lit(None).cast("string")
    for path in paths:
        if path == "ts_ms":
            part = F.col(ENVELOPE_TS)
        elif path.startswith("source."):
            part = source.getItem(path[7:]).try_cast("bigint")
        else:
            part = after_value(path[6:])
        parts.append(part)
        missing = F.coalesce(missing, F.when(part.isNull(), F.lit(f"missing sequence_by value: {path}")))
    zero = F.lit(0).cast("bigint")
    while len(parts) < 3:
        parts.append(zero)
    return Position(F.lit(""), (parts[0], parts[1], parts[2]), missing)


def seq_struct(position: Position, op: Column, source: Column) -> Column:
    """The full position value (see module doc)."""
    snapshot = (op == "r") | F.coalesce(source.getItem("snapshot").isin(*SNAPSHOT_MARKS), F.lit(False))
    op_rank = F.lit(None).cast("int")
    for name, rank in OP_RANK.items():
        op_rank = F.when(op == name, F.lit(rank)).otherwise(op_rank)
    return F.struct(
        position.text.alias("text"), position.parts[0].alias("p1"), position.parts[1].alias("p2"),
        position.parts[2].alias("p3"), F.when(snapshot, 0).otherwise(1).alias("stream"),
        F.coalesce(F.col(ORIGIN), F.lit("")).alias("origin"),
        F.coalesce(F.col(PARTITION), F.lit(0)).cast("int").alias("partition"),
        F.col(OFFSET).cast("bigint").alias("offset"), op_rank.alias("op_rank"),
    )

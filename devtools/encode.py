"""Build Debezium JSON change events in Python: for samples, tests and benchmarks.

Values are encoded as Debezium's defaults do it (decimal.handling.mode=precise,
time.precision.mode=adaptive): decimals as base64 unscaled bytes, dates as days, timestamps as
microseconds, with or without the ``{"schema":…,"payload":…}`` wrapper. Two variations real
streams carry: decimals as JSON numbers (Kafka's JsonConverter with decimal.format=NUMERIC) and
field names in upper case (a source whose names differ in case from the configured columns).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from typing import Any, Mapping

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# json.dumps writes no Decimal: a number is written as this quoted marker, then unquoted
_NUMBER = re.compile(r'"#number:(-?[0-9.]+)#"')


def decimal_b64(value: Decimal, scale: int) -> str:
    with localcontext() as ctx:
        ctx.prec = 100
        unscaled = int(value.scaleb(scale).to_integral_value())
    size = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


def _connect_field(name: str, sql_type: str, encoding: str | None = None) -> dict[str, Any]:
    t = sql_type.lower()
    if encoding is not None:   # one of Debezium's time encodings: ZonedTimestamp is text, the others integers
        base = "string" if encoding == "ZonedTimestamp" else "int64"
        return {"type": base, "optional": True, "name": f"io.debezium.time.{encoding}", "version": 1, "field": name}
    if t.startswith("decimal"):
        p, s = (int(x) for x in t[8:-1].split(","))
        return {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1, "parameters": {"scale": str(s), "connect.decimal.precision": str(p)}, "field": name}
    if t == "date":
        return {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1, "field": name}
    if t in ("timestamp", "timestamp_ntz"):
        return {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "version": 1, "field": name}
    base = {"bigint": "int64", "int": "int32", "smallint": "int16", "double": "double",
            "boolean": "boolean"}.get(t, "string")
    return {"type": base, "optional": True, "field": name}


def encode_value(value: Any, sql_type: str, decimals: str = "base64") -> Any:
    """`decimals`: "base64" (Debezium's default) or "numeric" (a JSON number)."""
    if value is None:
        return None
    t = sql_type.lower()
    if t.startswith("decimal"):
        scale = int(t[8:-1].split(",")[1])
        if decimals == "numeric":
            return f"#number:{Decimal(value).quantize(Decimal(1).scaleb(-scale)):f}#"
        return decimal_b64(Decimal(value), scale)
    if t == "date":
        return (value - dt.date(1970, 1, 1)).days
    if t in ("timestamp", "timestamp_ntz"):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        delta = aware - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return value


@dataclass
class EventWriter:
    connector: str                      # postgresql | mysql
    table: str
    columns: Mapping[str, str]          # name -> Spark SQL type
    wrapped: bool = False
    db: str = "shop"
    schema: str = "public"
    server: str = "dbserver1"
    decimals: str = "base64"            # or "numeric": JSON numbers
    upper_case_fields: bool = False     # the images and the schema name the columns in upper case
    # column -> a Debezium time encoding (NanoTimestamp, ZonedTimestamp, …) the schema names;
    # the rows give such a column's values already encoded
    encodings: Mapping[str, str] = field(default_factory=dict)

    def event(self, op: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
              position: int, ts_ms: int, snapshot: bool = False) -> str:
        payload = {
            "before": self._image(before), "after": self._image(after), "op": op,
            "ts_ms": ts_ms, "source": self._source(position, ts_ms, snapshot), "transaction": None,
        }
        event = payload if not self.wrapped else {"schema": self._schema(), "payload": payload}
        return _NUMBER.sub(r"\1", json.dumps(event, separators=(",", ":")))

    def truncate(self, position: int, ts_ms: int) -> str:
        return self.event("t", None, None, position, ts_ms)

    def _image(self, row: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if row is None:
            return None
        return {self._field(c): row[c] if c in self.encodings else encode_value(row.get(c), self.columns[c], self.decimals)
                for c in self.columns if c in row}

    def _field(self, column: str) -> str:
        return column.upper() if self.upper_case_fields else column

    def _source(self, position: int, ts_ms: int, snapshot: bool) -> dict[str, Any]:
        common = {"version": "2.7.0.Final", "connector": self.connector, "name": self.server,
                  "ts_ms": ts_ms, "snapshot": "true" if snapshot else "false", "db": self.db,
                  "table": self.table}
        if self.connector == "postgresql":
            return {**common, "schema": self.schema, "txId": position // 10, "lsn": position,
                    "sequence": json.dumps([str(max(0, position - 1)), str(position)])}
        return {**common, "server_id": 1, "file": f"mysql-bin.{1 + position // 100000:06d}",
                "pos": position % 100000, "row": 0, "gtid": None, "thread": 7, "query": None}

    def _schema(self) -> dict[str, Any]:
        value = {"type": "struct", "optional": True, "name": f"{self.server}.{self.table}.Value",
                 "fields": [_connect_field(self._field(c), t, self.encodings.get(c)) for c, t in self.columns.items()]}
        return {"type": "struct", "optional": False, "name": f"{self.server}.{self.table}.Envelope", "fields": [
            {**value, "field": "before"}, {**value, "field": "after"},
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            {"type": "struct", "optional": False, "field": "source", "fields": []},
        ]}

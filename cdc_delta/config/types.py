"""Spark SQL column types and Debezium encodings named in configs, checked without a JVM."""

from __future__ import annotations

import re
from dataclasses import dataclass

SIMPLE_TYPES = {
    "boolean": "boolean", "tinyint": "tinyint", "byte": "tinyint", "smallint": "smallint",
    "short": "smallint", "int": "int", "integer": "int", "bigint": "bigint", "long": "bigint",
    "float": "float", "real": "float", "double": "double", "string": "string",
    "binary": "binary", "date": "date", "timestamp": "timestamp",
    "timestamp_ltz": "timestamp", "timestamp_ntz": "timestamp_ntz",
}
ALLOWED_TYPES = sorted(set(SIMPLE_TYPES)) + ["decimal(p,s)"]
INTEGRAL = {"tinyint", "smallint", "int", "bigint"}
FRACTIONAL = {"float", "double"}
DECIMAL_RE = re.compile(r"^decimal\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$")

# Debezium / Kafka Connect logical types, by their short name; the long names map onto them.
ENCODINGS = (
    "Decimal", "VariableScaleDecimal", "Date", "Timestamp", "MicroTimestamp", "NanoTimestamp",
    "ZonedTimestamp", "Time", "MicroTime", "NanoTime", "Json", "Uuid", "Enum", "Year", "Bits",
)
LOGICAL_NAMES = {
    "org.apache.kafka.connect.data.Decimal": "Decimal",
    "io.debezium.data.VariableScaleDecimal": "VariableScaleDecimal",
    "io.debezium.time.Date": "Date", "org.apache.kafka.connect.data.Date": "Date",
    "io.debezium.time.Timestamp": "Timestamp", "org.apache.kafka.connect.data.Timestamp": "Timestamp",
    "io.debezium.time.MicroTimestamp": "MicroTimestamp",
    "io.debezium.time.NanoTimestamp": "NanoTimestamp",
    "io.debezium.time.ZonedTimestamp": "ZonedTimestamp",
    "io.debezium.time.Time": "Time", "org.apache.kafka.connect.data.Time": "Time",
    "io.debezium.time.MicroTime": "MicroTime", "io.debezium.time.NanoTime": "NanoTime",
    "io.debezium.data.Json": "Json", "io.debezium.data.Uuid": "Uuid",
    "io.debezium.data.Enum": "Enum", "io.debezium.data.EnumSet": "Enum",
    "io.debezium.time.Year": "Year", "io.debezium.data.Bits": "Bits",
}
TIME_ENCODINGS = {"Time", "MicroTime", "NanoTime"}
TIMESTAMP_ENCODINGS = {"Timestamp", "MicroTimestamp", "NanoTimestamp", "ZonedTimestamp"}


@dataclass(frozen=True)
class SqlType:
    """A normalised Spark SQL type: ``name`` is canonical ('bigint', 'decimal(10,2)')."""

    name: str
    precision: int | None = None
    scale: int | None = None

    @property
    def kind(self) -> str:
        """Coarse family used by decoders and the schema-change rules."""
        if self.precision is not None:
            return "decimal"
        if self.name in INTEGRAL:
            return "integral"
        if self.name in FRACTIONAL:
            return "fractional"
        if self.name in ("timestamp", "timestamp_ntz"):
            return "timestamp"
        return self.name

    def __str__(self) -> str:
        return self.name


def parse_sql_type(text: str) -> SqlType:
    """Parse a column type; raise ValueError naming the allowed types."""
    t = str(text).strip().lower()
    if t in SIMPLE_TYPES:
        return SqlType(SIMPLE_TYPES[t])
    m = DECIMAL_RE.match(t)
    if m:
        precision, scale = int(m.group(1)), int(m.group(2) or 0)
        if not 1 <= precision <= 38 or scale > precision:
            raise ValueError(f"decimal precision must be 1..38 and scale <= precision, got {text!r}")
        return SqlType(f"decimal({precision},{scale})", precision, scale)
    raise ValueError(f"unknown column type {text!r}; allowed: {', '.join(ALLOWED_TYPES)}")


def normalise_encoding(text: str) -> str:
    """Accept a short (``MicroTimestamp``) or full (``io.debezium.time.MicroTimestamp``) name."""
    if text in ENCODINGS:
        return text
    if text in LOGICAL_NAMES:
        return LOGICAL_NAMES[text]
    raise ValueError(f"unknown encoding {text!r}; allowed: {', '.join(ENCODINGS)}")

"""Kafka Connect schemas carried in the ``{"schema":…,"payload":…}`` wrapper. Pure Python.

A batch holds few distinct schemas; the driver parses each once and turns it into, per column,
the encoding the decoders need and the type the schema-change rules compare.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..config.types import LOGICAL_NAMES, TIME_ENCODINGS, TIMESTAMP_ENCODINGS, SqlType

INTEGRAL_CONNECT = {"int8", "int16", "int32", "int64"}


@dataclass(frozen=True)
class FieldInfo:
    """One column of the row image as the event's schema describes it."""

    connect_type: str          # int32, string, bytes, struct, ...
    encoding: str | None       # short logical name (MicroTimestamp, Decimal, ...) or None
    scale: int | None = None   # Decimal's scale parameter
    precision: int | None = None

    @property
    def label(self) -> str:
        return f"{self.connect_type} ({self.encoding})" if self.encoding else self.connect_type

    def kind(self) -> str:
        """The value family, on the same scale as ``SqlType.kind``."""
        enc = self.encoding
        if enc in ("Decimal", "VariableScaleDecimal"):
            return "decimal"
        if enc == "Date":
            return "date"
        if enc in TIMESTAMP_ENCODINGS:
            return "timestamp"
        if enc in TIME_ENCODINGS or enc in ("Json", "Uuid", "Enum"):
            return "string"
        if enc == "Bits":
            return "bits"
        if self.connect_type in INTEGRAL_CONNECT:
            return "integral"
        if self.connect_type in ("float32", "float64", "float", "double"):
            return "fractional"
        if self.connect_type == "boolean":
            return "boolean"
        if self.connect_type == "bytes":
            return "binary"
        return "string"  # string, struct, array, map: kept as text

    def evolved_type(self) -> str:
        """Delta column type for a column that appears mid-stream (lossless for every value)."""
        kind = self.kind()
        if kind == "decimal":
            if self.encoding == "Decimal" and self.scale is not None:
                return f"decimal({self.precision or 38},{self.scale})"
            return "string"  # variable scale: exact as text
        return {"integral": "bigint", "fractional": "double", "bits": "binary"}.get(kind, kind)


# kinds of event values each table column kind accepts without losing data
LOSSLESS_INTO = {
    # integers into boolean: 0 and 1 are taken, any other value is quarantined (as without the
    # wrapper); MySQL sends BOOLEAN (TINYINT(1)) as int16
    "integral": {"integral", "decimal", "fractional", "string", "boolean"},
    "bits": {"binary", "integral", "string"},
    "fractional": {"fractional", "string"},
    "decimal": {"decimal", "fractional", "string"},
    "boolean": {"boolean", "string"},
    "binary": {"binary", "string"},
    "date": {"date", "timestamp", "string"},
    "timestamp": {"timestamp", "string"},
    "string": {"string"},
}


def lossless(event: FieldInfo, table_type: SqlType) -> bool:
    """Whether every value of ``event`` fits ``table_type`` (range overflow is caught per value)."""
    return table_type.kind in LOSSLESS_INTO.get(event.kind(), {"string"})


def image_fields(schema_json: str) -> dict[str, FieldInfo]:
    """Columns of the ``after`` image (or ``before`` when the schema has no after)."""
    try:
        schema = json.loads(schema_json)
    except (TypeError, ValueError):
        return {}
    if not isinstance(schema, dict):
        return {}
    images = {f.get("field"): f for f in schema.get("fields") or [] if isinstance(f, dict)}
    image = images.get("after") or images.get("before") or {}
    return {f["field"]: _field_info(f) for f in image.get("fields") or [] if isinstance(f, dict) and "field" in f}


def _field_info(field: dict) -> FieldInfo:
    encoding = LOGICAL_NAMES.get(field.get("name") or "")
    params = field.get("parameters") or {}
    scale = _int(params.get("scale"))
    precision = _int(params.get("connect.decimal.precision"))
    return FieldInfo(str(field.get("type", "string")), encoding, scale, precision)


def _int(v: object) -> int | None:
    try:
        return int(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def infer_json_type(samples: list[str]) -> str:
    """Type for a column that appears mid-stream in events without a schema, from its values."""
    values = [s for s in samples if s is not None]
    if not values:
        return "string"
    if all(_is_int(v) for v in values):
        return "bigint"
    if all(_is_int(v, 38) for v in values):
        return "decimal(38,0)"   # a double would lose digits
    if all(_is_number(v) for v in values):
        return "double"
    if all(v in ("true", "false") for v in values):
        return "boolean"
    return "string"


def _is_int(v: str, digits: int = 18) -> bool:
    return v.lstrip("-").isdigit() and len(v.lstrip("-")) <= digits


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return v.strip().lower() not in ("nan", "inf", "-inf", "infinity", "-infinity")

"""Positions collected to the driver: as Spark literals, and compared as Spark compares them."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, Row
from pyspark.sql import functions as F

from ..frame import SEQ_TYPE

SEQ_FIELDS = [f.split(":") for f in SEQ_TYPE[len("struct<"):-1].split(",")]


def seq_literal(row: Row) -> Column:
    """A position value collected to the driver, as a literal for comparisons."""
    return F.struct(*[F.lit(row[name]).cast(kind).alias(name) for name, kind in SEQ_FIELDS]).cast(SEQ_TYPE)


def seq_order(row: Row) -> tuple[Any, ...]:
    """A sort key that orders positions as Spark does (field by field, null first)."""
    return tuple((0,) if row[name] is None else (1, row[name]) for name, _ in SEQ_FIELDS)


def newer(a: Row | None, b: Row | None) -> Row | None:
    if a is None or b is None:
        return a if b is None else b
    return a if seq_order(a) >= seq_order(b) else b

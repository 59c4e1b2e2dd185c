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


def possibly_after(position: Column, row: Row) -> Column:
    """A condition on a position's two leading fields that every position after `row` meets
    (Spark's order: field by field, null first). Not exact alone; beside the exact comparison
    it lets Delta skip the files whose statistics lie wholly at or before `row`."""
    (text, _), (p1, _) = SEQ_FIELDS[:2]
    field_text, field_p1 = position.getField(text), position.getField(p1)
    p1_not_before = F.lit(True) if row[p1] is None else field_p1 >= F.lit(row[p1])
    if row[text] is None:
        return field_text.isNotNull() | p1_not_before
    return (field_text > F.lit(row[text])) | ((field_text == F.lit(row[text])) & p1_not_before)


def oldest(rows: list[Row | None]) -> Row | None:
    """The oldest of some positions (None where unknown), in Spark's order."""
    known = [r for r in rows if r is not None]
    return min(known, key=seq_order, default=None)


def newer(a: Row | None, b: Row | None) -> Row | None:
    if a is None or b is None:
        return a if b is None else b
    return a if seq_order(a) >= seq_order(b) else b

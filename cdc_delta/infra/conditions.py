"""Conditions joined from lists (Spark has no n-ary AND/OR on Columns)."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

from .names import quote


def all_of(conditions: list[Column]) -> Column:
    return reduce(lambda a, b: a & b, conditions)


def any_of(conditions: list[Column]) -> Column:
    return reduce(lambda a, b: a | b, conditions)


def same_values(columns: tuple[str, ...] | list[str], left: str, right: str) -> Column:
    """Each of `columns` equal in the frames aliased `left` and `right`, NULL equal to NULL."""
    return all_of([F.col(f"{left}.{quote(c)}").eqNullSafe(F.col(f"{right}.{quote(c)}")) for c in columns])

"""Conditions joined from lists (Spark has no n-ary AND/OR on Columns)."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column


def all_of(conditions: list[Column]) -> Column:
    return reduce(lambda a, b: a & b, conditions)


def any_of(conditions: list[Column]) -> Column:
    return reduce(lambda a, b: a | b, conditions)

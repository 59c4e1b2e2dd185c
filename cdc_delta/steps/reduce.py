"""A table's guarded changes -> the last change per key, TOAST placeholders answered from the
batch where it can. Runs no action."""

from __future__ import annotations

from functools import lru_cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..frame import OP, SEQ_COLUMN, TS_COLUMN, scratch, toast_column, unavailable
from ..infra.names import col
from .view import TableView

LAST = scratch("last")


def reduce_to_last_change(changes: DataFrame, view: TableView, toasted: list[str] | None = None) -> DataFrame:
    """Per key, the last change of the batch. Where its value of a column is a TOAST
    placeholder, the value comes from the newest earlier change of the key in the batch that
    has one (a delete between them leaves no value), and `toast_column(c)` says where it came
    from: {seq: that change's position or null, known: it had a value}. The MERGE takes the
    stored value instead when the stored row is newer than that change (see the current-state
    sink's plan), so a value is never carried from a change the table would reject. Changes
    reach this step already guarded against tombstones and truncates.

    `toasted`: the columns in which some change of the batch has a placeholder (the batch's
    facts; None: any column). Only these get a donor and a `toast_column`: elsewhere the last
    change's value is the value, as it would be, and the MERGE takes it as it is."""
    values = view.values
    toasted = values if toasted is None else [c for c in values if c in toasted]
    keys, aggregates, out = _reduce_columns(tuple(view.keys), tuple(values), tuple(toasted))
    return changes.groupBy(*keys).agg(*aggregates).select(*out)


@lru_cache(maxsize=64)
def _reduce_columns(keys: tuple[str, ...], values: tuple[str, ...], toasted: tuple[str, ...]
                    ) -> tuple[tuple[Column, ...], tuple[Column, ...], tuple[Column, ...]]:
    """The grouping, the aggregates and the final select of `reduce_to_last_change`, built
    once per table shape: from Python, through Py4J, they cost the driver time at every batch."""
    last = F.max_by(F.struct(
        OP, SEQ_COLUMN, TS_COLUMN, *[col(c) for c in values], *[col(unavailable(c)) for c in toasted]),
        SEQ_COLUMN)
    deleted = F.col(OP) == "d"
    donors = [F.max_by(F.struct(col(c).alias("v"), F.col(SEQ_COLUMN).alias("seq"), (~deleted).alias("known")),
                       F.when(deleted | ~col(unavailable(c)), F.col(SEQ_COLUMN))).alias(scratch("c", c))
              for c in toasted]
    out = [col(k) for k in keys] + [F.col(LAST).getField(n).alias(n) for n in (OP, SEQ_COLUMN, TS_COLUMN)]
    for c in values:
        if c not in toasted:
            out.append(F.col(LAST).getField(c).alias(c))
            continue
        placeholder = F.col(LAST).getField(unavailable(c))
        donor = col(scratch("c", c))
        known = F.coalesce(donor.getField("known"), F.lit(False))
        out.append(F.when(placeholder, F.when(known, donor.getField("v")))
                   .otherwise(F.col(LAST).getField(c)).alias(c))
        out.append(F.when(placeholder, F.struct(donor.getField("seq").alias("seq"), known.alias("known")))
                   .alias(toast_column(c)))
    return tuple(col(k) for k in keys), (last.alias(LAST), *donors), tuple(out)

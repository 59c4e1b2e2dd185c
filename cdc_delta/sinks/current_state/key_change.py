"""TOAST values across a primary-key change. Postgres sends a key change as a delete of the old
key and a create of the new one, the row's unchanged out-of-line values as placeholders; this
answers them from the old key. Unlike a step it runs jobs (a count per pass) and reads stored
versions of the table: only batches with key changes come here."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...frame import OP, SEQ_COLUMN, previous_key, scratch, unavailable
from ...infra.conditions import all_of
from ...infra.names import col
from ...steps.view import TableView

STORED = scratch("s")


def carry_across_key_change(changes: DataFrame, stored: DataFrame, view: TableView,
                            max_chain: int = 8) -> DataFrame:
    """A primary-key change reaches Debezium as a delete of the old key and a create of the new
    one, and Postgres sends the row's unchanged out-of-line (TOAST) values as placeholders. Such
    a placeholder takes the old key's value from just before the change: from the batch's
    earlier changes of the old key, else from `stored` (recent versions of the table, since the
    delete may have landed in an earlier batch). A chain of key changes (a -> b -> c) resolves
    one link per pass (only batches with key changes pay for these passes); what no pass
    resolves stays flagged."""
    values = view.values
    moved = (F.col(OP) == "c") & col(previous_key(view.keys[0])).isNotNull()
    waiting = moved & F.greatest(*[col(unavailable(c)) for c in values])
    kept = stored.select(*[col(k).alias(scratch("s", k)) for k in view.keys],
                         F.col(SEQ_COLUMN).alias(scratch("s", "seq")), *[col(c).alias(scratch("s", c)) for c in values])
    left = changes.filter(waiting).count()
    for _ in range(max_chain):
        if not left:
            break
        filled = _fill_from_old_key(changes.filter(waiting), changes, kept, view)
        changes = changes.filter(~waiting).unionByName(filled).localCheckpoint()  # keeps plans flat
        before, left = left, changes.filter(waiting).count()
        if left == before:   # nothing resolved: the rest has no donor in reach
            break
    return changes


def _fill_from_old_key(todo: DataFrame, changes: DataFrame, kept: DataFrame, view: TableView) -> DataFrame:
    keys, values = view.keys, view.values
    earlier = changes.filter(F.col(OP).isin("c", "u", "r")).select(
        *[col(k).alias(scratch("d", k)) for k in keys], F.col(SEQ_COLUMN).alias(scratch("d", "seq")),
        *[col(c).alias(scratch("d", c)) for c in values],
        *[col(unavailable(c)).alias(scratch("du", c)) for c in values])
    t = _donors(todo, earlier, scratch("d", ""), keys, [F.max_by(F.struct(col(scratch("d", c)).alias("v")), F.when(
        ~col(scratch("du", c)), F.col(scratch("d", "seq")))).alias(scratch("b", c)) for c in values])
    t = _donors(t, kept, scratch("s", ""), keys, [F.max_by(F.struct(*[col(scratch("s", c)).alias(c) for c in values]),
                                                     F.col(scratch("s", "seq"))).alias(STORED)])
    filled = {}
    for c in values:
        placeholder, in_batch, in_store = (col(unavailable(c)), col(scratch("b", c)).isNotNull(),
                                           F.col(STORED).isNotNull())
        filled[c] = F.when(placeholder & in_batch, col(scratch("b", c)).getField("v")) \
            .when(placeholder & in_store, F.col(STORED).getField(c)).otherwise(col(c))
        filled[unavailable(c)] = placeholder & ~in_batch & ~in_store
    return t.select(*[filled.get(c, col(c)).alias(c) for c in todo.columns])


def _donors(todo: DataFrame, donors: DataFrame, prefix: str, keys: list[str], picks: list[Column]) -> DataFrame:
    """`todo` with `picks` aggregated over the donor rows of its old key older than the change."""
    same_key = [todo[previous_key(k)] == donors[prefix + k] for k in keys]
    older = donors[prefix + "seq"] < todo[SEQ_COLUMN]
    return todo.join(donors, all_of(same_key) & older, "left").groupBy(*[col(c) for c in todo.columns]).agg(*picks)

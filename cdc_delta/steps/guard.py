"""The position guard: a change applies only if no tombstone of its key is newer and it is
newer than the table's last truncate. Runs no action: the tombstones are given as a DataFrame
(only when some change of the batch is older than the newest tombstone, see the current-state
sink's bounds), the truncate as a position literal."""

from __future__ import annotations

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from ..frame import SEQ_COLUMN, scratch
from ..infra.conditions import all_of
from ..infra.names import col, quote
from .truncate_barrier import after_truncate

TOMB_SEQ = scratch("tomb_seq")


def guard(changes: DataFrame, keys: list[str], tombstones: DataFrame | None, truncate: Row | None) -> DataFrame:
    """Drop changes older than a tombstone of their key (`tombstones`: keys and position), or
    not newer than the table's last truncate. A delete at its own tombstone's position passes:
    its tombstone may be committed while the MERGE that applies it was not (both are written at
    once)."""
    alive = changes
    if tombstones is not None:
        tomb = tombstones.select(*[col(k) for k in keys], F.col(SEQ_COLUMN).alias(TOMB_SEQ))
        newer_tombstone = tomb[TOMB_SEQ] > F.col(f"r.{SEQ_COLUMN}")
        same_key = [F.col(f"r.{quote(k)}") == tomb[quote(k)] for k in keys]
        alive = changes.alias("r").join(tomb, all_of([newer_tombstone, *same_key]), "left_anti")
    return after_truncate(alive, truncate)

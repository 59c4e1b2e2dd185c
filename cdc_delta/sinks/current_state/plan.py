"""The MERGE of one table's reduced changes, as a plain value (testable without Spark).

    WHEN MATCHED AND op = 'd' AND newer      THEN DELETE
    WHEN MATCHED AND op <> 'd' AND newer     THEN UPDATE (TOAST placeholders: see below)
    WHEN NOT MATCHED AND op <> 'd'           THEN INSERT
"newer" is the position guard: a change not newer than the stored row is a no-op, so replays,
duplicates and late events change nothing.

A column whose last change was a TOAST placeholder takes the value of the newest change before
it that the table accepts: the batch's donor change (`toast_column(c)`.seq) when it is newer
than the stored row, else the stored value. An insert takes the donor's value, or NULL when no
value is known (counted as toast_unresolved).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...frame import OP, SEQ_COLUMN, TS_COLUMN, toast_column
from ...infra.names import quote

NEWER = f"s.{SEQ_COLUMN} > t.{SEQ_COLUMN}"


@dataclass(frozen=True)
class MergePlan:
    on: str
    delete_when: str
    update_when: str
    update_set: dict[str, str]
    insert_when: str
    insert_values: dict[str, str]


def merge_plan(keys: list[str], values: list[str], key_range: tuple[int, int] | None = None,
               toasted: list[str] | None = None) -> MergePlan:
    """`key_range`: the lowest and highest first key of the changes (an integer key): a
    condition on the target alone, by which Delta skips files whose key statistics lie outside.
    `toasted`: the columns that may hold a placeholder (None: all), the only ones with a CASE
    (the reduced changes have a `toast_column` for these only)."""
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in keys)
    if key_range is not None:
        on += f" AND t.{quote(keys[0])} BETWEEN {int(key_range[0])} AND {int(key_range[1])}"
    update = {quote(c): (f"CASE WHEN {stored_value_wins(c)} THEN t.{quote(c)} ELSE s.{quote(c)} END"
                         if toasted is None or c in toasted else f"s.{quote(c)}") for c in values}
    update.update({SEQ_COLUMN: f"s.{SEQ_COLUMN}", TS_COLUMN: f"s.{TS_COLUMN}"})
    inserted = [*keys, *values, SEQ_COLUMN, TS_COLUMN]
    return MergePlan(
        on=on,
        delete_when=f"s.{OP} = 'd' AND {NEWER}",
        update_when=f"s.{OP} <> 'd' AND {NEWER}",
        update_set=update,
        insert_when=f"s.{OP} <> 'd'",
        insert_values={quote(c): f"s.{quote(c)}" for c in inserted},
    )


def stored_value_wins(column: str) -> str:
    """The change's value of `column` is a placeholder and no change of the batch newer than
    the stored row had a value for it."""
    toast = f"s.{quote(toast_column(column))}"
    return f"{toast} IS NOT NULL AND ({toast}.seq IS NULL OR {toast}.seq <= t.{SEQ_COLUMN})"


def unresolved_after_merge(column: str, stored_seq: str) -> str:
    """Given the reduced change `s` and the position of its stored row (`stored_seq`: NULL
    when there is none): the MERGE writes NULL for an unavailable value of `column`. True,
    else false (never NULL)."""
    toast = f"s.{quote(toast_column(column))}"
    inserted = f"{stored_seq} IS NULL AND s.{OP} <> 'd'"
    updated = f"s.{SEQ_COLUMN} > {stored_seq} AND s.{OP} <> 'd' AND {toast}.seq > {stored_seq}"
    return f"COALESCE({toast} IS NOT NULL AND NOT {toast}.known AND (({inserted}) OR ({updated})), false)"

"""The MERGE of one table's reduced changes, as a plain value (testable without Spark).

    WHEN MATCHED AND op = 'd' AND newer      THEN DELETE
    WHEN MATCHED AND op <> 'd' AND newer     THEN UPDATE (TOAST placeholders keep stored values)
    WHEN NOT MATCHED AND op <> 'd'           THEN INSERT
"newer" is the position guard: a change not newer than the stored row is a no-op, so replays,
duplicates and late events change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .tables import SEQ_COLUMN, TS_COLUMN, quote

NEWER = f"s.{SEQ_COLUMN} > t.{SEQ_COLUMN}"


@dataclass(frozen=True)
class MergePlan:
    on: str
    delete_when: str
    update_when: str
    update_set: dict[str, str]
    insert_when: str
    insert_values: dict[str, str]


def merge_plan(keys: list[str], values: list[str]) -> MergePlan:
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in keys)
    update = {quote(c): f"CASE WHEN s.{quote('_cdc_u_' + c)} THEN t.{quote(c)} ELSE s.{quote(c)} END"
              for c in values}
    update.update({SEQ_COLUMN: f"s.{SEQ_COLUMN}", TS_COLUMN: f"s.{TS_COLUMN}"})
    inserted = [*keys, *values, SEQ_COLUMN, TS_COLUMN]
    return MergePlan(
        on=on,
        delete_when=f"s._cdc_op = 'd' AND {NEWER}",
        update_when=f"s._cdc_op <> 'd' AND {NEWER}",
        update_set=update,
        insert_when="s._cdc_op <> 'd'",
        insert_values={quote(c): f"s.{quote(c)}" for c in inserted},
    )

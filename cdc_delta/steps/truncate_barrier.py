"""Changes -> those after a truncate: a truncate removes every row older than itself, and a
change not newer than the table's last truncate would bring one back. Runs no action."""

from __future__ import annotations

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from ..frame import SEQ_COLUMN
from .position import seq_literal


def after_truncate(changes: DataFrame, truncate: Row | None) -> DataFrame:
    """`truncate`: the position of the table's newest truncate, or None when it has none."""
    if truncate is None:
        return changes
    return changes.filter(F.col(SEQ_COLUMN) > seq_literal(truncate))

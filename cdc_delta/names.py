"""Column names as users give them: quoted wherever Spark would parse them, so reserved words,
spaces, dots and backticks in names work and can not change a statement."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def quote(name: str) -> str:
    """A SQL identifier, quoted so names like `select`, `a b` or with a backtick work."""
    return "`" + name.replace("`", "``") + "`"


def col(name: str) -> Column:
    """F.col for a literal column name (F.col itself parses dots and backticks)."""
    return F.col(quote(name))


def toast_column(column: str) -> str:
    """A reduced change's note of where the value of `column` came from when its last change
    sent a TOAST placeholder (null when it did not): {seq: the donor change's position, or
    null; known: that change had a value}."""
    return f"_cdc_toast_{column}"

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

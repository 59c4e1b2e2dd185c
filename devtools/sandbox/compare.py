"""Source table vs Delta table, row by row: every value as exact text (decimals with their
scale, timestamps to the microsecond in UTC), and a report that names the keys that differ."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .schemas import SourceTable

Rows = dict[tuple, dict[str, "str | None"]]


def canonical(value: Any, utc_naive: bool = False) -> str | None:
    """The comparable text of a source value. `utc_naive`: a naive datetime that is a UTC instant."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, (dt.date, Decimal, int)):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def lake_rows(df: Any, table: SourceTable) -> Rows:
    """A Delta table's rows by key, formatted as `canonical` formats the source's (session
    time zone UTC, as cdc-delta's session sets it)."""
    from pyspark.sql import functions as F

    def text(c):
        if c.kind in ("timestamp", "timestamptz"):
            return F.date_format(F.col(c.name), "yyyy-MM-dd HH:mm:ss.SSSSSS").alias(c.name)
        return F.col(c.name).cast("string").alias(c.name)

    rows = df.select(*[text(c) for c in table.columns]).collect()
    return {tuple(r[k] for k in table.keys): r.asDict() for r in rows}


@dataclass
class TableDiff:
    table: str
    source_rows: int
    lake_rows: int
    missing: list[tuple] = field(default_factory=list)      # in the source, not in the lake
    extra: list[tuple] = field(default_factory=list)        # in the lake (e.g. deleted at the source)
    changed: list[tuple[tuple, str, str | None, str | None]] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def report(self, limit: int = 10) -> str:
        if self.equal:
            return f"{self.table}: equal ({self.source_rows} rows)"
        lines = [f"{self.table}: source {self.source_rows} rows, lake {self.lake_rows}; "
                 f"{len(self.missing)} missing, {len(self.extra)} extra, {len(self.changed)} values differ"]
        lines += [f"  missing key {k}" for k in self.missing[:limit]]
        lines += [f"  extra key {k} (absent at the source)" for k in self.extra[:limit]]
        lines += [f"  key {k} column {c}: source {_short(s)} lake {_short(l)}" for k, c, s, l in self.changed[:limit]]
        return "\n".join(lines)


def diff(table: SourceTable, source: Rows, lake: Rows) -> TableDiff:
    out = TableDiff(table.name, len(source), len(lake))
    out.missing = sorted(k for k in source if k not in lake)
    out.extra = sorted(k for k in lake if k not in source)
    for key in sorted(k for k in source if k in lake):
        for col in table.columns:
            if source[key][col.name] != lake[key][col.name]:
                out.changed.append((key, col.name, source[key][col.name], lake[key][col.name]))
    return out


def _short(value: str | None, width: int = 60) -> str:
    if value is None:
        return "NULL"
    return repr(value) if len(value) <= width else f"{value[:width]!r}… ({len(value)} chars)"

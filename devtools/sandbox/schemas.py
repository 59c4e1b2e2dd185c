"""The source tables of the sandbox, shaped like the seeds' (Postgres `transactions`, `orders`,
`customers`; MariaDB `orders`, `payments`), declared once for DDL, workload, pipeline config
and comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    sql: str      # the column type in the source database's DDL
    kind: str     # int, decimal, text, bigtext (TOASTed in Postgres), date, timestamp, timestamptz, json
    lake: str | dict[str, str]   # the column as cdc-delta's config declares it
    scale: int = 0


@dataclass(frozen=True)
class SourceTable:
    name: str
    columns: tuple[Column, ...]
    keys: tuple[str, ...]

    @property
    def value_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.name not in self.keys)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def key_of(self, n: int) -> tuple[int, ...]:
        """Key columns from one integer: (n,) or, for a composite key, (n // 8, n % 8)."""
        return (n,) if len(self.keys) == 1 else (n // 8, n % 8)

    def ddl(self) -> str:
        cols = ", ".join(f"{c.name} {c.sql}" for c in self.columns)
        return f"CREATE TABLE {self.name} ({cols}, PRIMARY KEY ({', '.join(self.keys)}))"

    def lake_spec(self, match: dict[str, str]) -> dict[str, Any]:
        return {"name": self.name, "match": match, "keys": list(self.keys),
                "columns": {c.name: c.lake for c in self.columns}}


MICROS = {"type": "timestamp", "encoding": "MicroTimestamp"}
ZONED = {"type": "timestamp", "encoding": "ZonedTimestamp"}
DAYS = {"type": "date", "encoding": "Date"}


def _c(name: str, sql: str, kind: str, lake: str | dict[str, str], scale: int = 0) -> Column:
    return Column(name, sql, kind, lake, scale)


POSTGRES_TABLES = (
    SourceTable("transactions", (
        _c("txn_id", "bigint", "int", "bigint"),
        _c("acc_id", "bigint NOT NULL", "int", "bigint"),
        _c("txn_value", "numeric(12,2)", "decimal", "decimal(12,2)", 2),
        _c("txn_date", "timestamp(6)", "timestamp", MICROS),
        _c("txn_type", "varchar(16)", "text", "string"),
        _c("booked_at", "timestamptz", "timestamptz", ZONED),
        _c("memo", "text", "bigtext", "string"),
    ), ("txn_id",)),
    SourceTable("orders", (
        _c("order_id", "bigint", "int", "bigint"),
        _c("customer_id", "bigint", "int", "bigint"),
        _c("amount", "numeric(10,2)", "decimal", "decimal(10,2)", 2),
        _c("status", "varchar(20)", "text", "string"),
        _c("order_date", "date", "date", DAYS),
        _c("updated_at", "timestamp(6)", "timestamp", MICROS),
        _c("details", "jsonb", "json", "string"),
    ), ("order_id",)),
    SourceTable("customers", (
        _c("customer_id", "bigint", "int", "bigint"),
        _c("name", "text", "text", "string"),
        _c("email", "text", "text", "string"),
        _c("city", "text", "text", "string"),
        _c("bio", "text", "bigtext", "string"),
    ), ("customer_id",)),
)

MARIADB_TABLES = (
    SourceTable("orders", (
        _c("order_id", "BIGINT", "int", "bigint"),
        _c("customer_id", "BIGINT", "int", "bigint"),
        _c("amount", "DECIMAL(10,2)", "decimal", "decimal(10,2)", 2),
        _c("status", "VARCHAR(20)", "text", "string"),
        _c("order_date", "DATE", "date", DAYS),
        _c("updated_at", "DATETIME(6)", "timestamp", MICROS),
        _c("details", "JSON", "json", "string"),
    ), ("order_id",)),
    SourceTable("payments", (
        _c("order_id", "BIGINT", "int", "bigint"),
        _c("payment_no", "INT", "int", "int"),
        _c("amount", "DECIMAL(12,4)", "decimal", "decimal(12,4)", 4),
        _c("method", "VARCHAR(16)", "text", "string"),
        _c("paid_at", "TIMESTAMP(6) NULL DEFAULT NULL", "timestamptz", ZONED),
        _c("note", "TEXT", "bigtext", "string"),
    ), ("order_id", "payment_no")),
)

"""Connections to the sandbox's source databases and what differs between them: drivers,
parameter forms, replica identity, reading a table back in a comparable form."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .schemas import MARIADB_TABLES, POSTGRES_TABLES, SourceTable


@dataclass(frozen=True)
class Database:
    engine: str          # postgres | mariadb
    host: str
    port: int
    user: str
    password: str
    database: str

    @property
    def tables(self) -> tuple[SourceTable, ...]:
        return POSTGRES_TABLES if self.engine == "postgres" else MARIADB_TABLES

    def connect(self) -> Any:
        if self.engine == "postgres":
            import psycopg

            return psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                   dbname=self.database, options="-c timezone=UTC")
        import pymysql

        return pymysql.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                               database=self.database, init_command="SET time_zone = '+00:00'")

    def placeholder(self, kind: str) -> str:
        return "%s::jsonb" if kind == "json" and self.engine == "postgres" else "%s"

    def retryable(self, exc: BaseException) -> bool:
        """A deadlock or lock timeout: the transaction did nothing and can be tried again."""
        if self.engine == "postgres":
            return getattr(exc, "sqlstate", None) in ("40P01", "40001")
        return bool(exc.args) and exc.args[0] in (1213, 1205)

    def param(self, kind: str, value: Any) -> Any:
        """Aware UTC instants for Postgres timestamptz; MariaDB's TIMESTAMP takes the naive UTC
        wall time (the session time zone is UTC)."""
        if kind == "timestamptz" and value is not None and self.engine == "mariadb":
            return value.replace(tzinfo=None)
        return value


def postgres_from_env(database: str | None = None) -> Database:
    return Database("postgres", os.environ.get("PG_HOST", "127.0.0.1"), int(os.environ.get("PG_PORT", "5432")),
                    os.environ.get("PG_USER", "cdc"), os.environ.get("PG_PASSWORD", "cdc"),
                    database or os.environ.get("PG_DATABASE", "shop"))


def mariadb_from_env(database: str | None = None) -> Database:
    return Database("mariadb", os.environ.get("MARIADB_HOST", "127.0.0.1"),
                    int(os.environ.get("MARIADB_PORT", "3306")), os.environ.get("MARIADB_USER", "cdc"),
                    os.environ.get("MARIADB_PASSWORD", "cdc"), database or os.environ.get("MARIADB_DATABASE", "shop"))


def create_database(admin: Database, name: str) -> Database:
    """A fresh database beside the admin one (dropped first if it exists)."""
    conn = admin.connect()
    try:
        if admin.engine == "postgres":
            conn.autocommit = True
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        else:
            with conn.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
                cur.execute(f"CREATE DATABASE `{name}`")
    finally:
        conn.close()
    return Database(admin.engine, admin.host, admin.port, admin.user, admin.password, name)


def create_tables(db: Database, replica_identity: str = "default") -> None:
    """The sandbox tables, replaced if present; Postgres tables get REPLICA IDENTITY DEFAULT or FULL."""
    conn = db.connect()
    try:
        with conn.cursor() as cur:
            for table in db.tables:
                cur.execute(f"DROP TABLE IF EXISTS {table.name}")
                cur.execute(table.ddl())
                if db.engine == "postgres":
                    cur.execute(f"ALTER TABLE {table.name} REPLICA IDENTITY {replica_identity.upper()}")
        conn.commit()
    finally:
        conn.close()


def read_table(db: Database, table: SourceTable) -> dict[tuple, dict[str, str | None]]:
    """Rows by key, each value as the comparable text `compare.canonical` gives."""
    from .compare import canonical

    select = ", ".join(f"{c.name}::text" if c.kind == "json" and db.engine == "postgres" else c.name
                       for c in table.columns)
    conn = db.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT {select} FROM {table.name}")
            rows = cur.fetchall()
    finally:
        conn.close()
    names = [c.name for c in table.columns]
    out = {}
    for row in rows:
        values = {n: canonical(v, utc_naive=(db.engine == "mariadb" and table.column(n).kind == "timestamptz"))
                  for n, v in zip(names, row)}
        out[tuple(values[k] for k in table.keys)] = values
    return out

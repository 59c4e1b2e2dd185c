"""A seeded workload of concurrent transactions against the sandbox tables: multi-row inserts,
updates that leave the large text alone, deletes, re-inserts of deleted keys, primary-key
changes, rollbacks and a TRUNCATE, counted as the row changes Debezium will emit."""

from __future__ import annotations

import datetime as dt
import json
import random
import string
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .databases import Database
from .schemas import Column, SourceTable

WORDS = ("new", "paid", "shipped", "returned", "open", "held", "card", "wire", "cash", "Ünïcödé ✓", "a'b", "")
BIG_TEXT_CHARS = string.ascii_letters + string.digits


def value_for(col: Column, rng: random.Random) -> Any:
    """A random value of the column's kind; 1 in 20 non-key values is NULL."""
    if col.kind == "int":
        return rng.randint(1, 10**9)
    if col.kind == "decimal":
        digits = 6 + col.scale
        return Decimal(rng.randint(-10**digits + 1, 10**digits - 1)).scaleb(-col.scale)
    if col.kind == "bigtext":      # incompressible, so Postgres stores it out of line (TOAST)
        return "".join(rng.choices(BIG_TEXT_CHARS, k=rng.randint(3000, 9000)))
    if col.kind == "date":
        return dt.date(1965, 1, 1) + dt.timedelta(days=rng.randint(0, 30000))
    if col.kind in ("timestamp", "timestamptz"):
        instant = dt.datetime(1999, 12, 31) + dt.timedelta(microseconds=rng.randint(0, 10**15))
        return instant.replace(tzinfo=dt.timezone.utc) if col.kind == "timestamptz" else instant
    if col.kind == "json":
        return json.dumps({"note": rng.choice(WORDS), "n": rng.randint(0, 99), "tags": rng.sample(WORDS[:6], 2)})
    return rng.choice(WORDS) + str(rng.randint(0, 999))


def row_for(table: SourceTable, key: tuple, rng: random.Random) -> dict[str, Any]:
    row = dict(zip(table.keys, key))
    for col in table.value_columns:
        nullable = "NOT NULL" not in col.sql and col.kind != "bigtext"
        row[col.name] = None if nullable and rng.random() < 0.05 else value_for(col, rng)
    return row


@dataclass
class Counts:
    """Row changes committed, by kind, as Debezium emits them (a key change is a delete and a create)."""
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    truncates: int = 0
    transactions: int = 0
    rollbacks: int = 0

    @property
    def changes(self) -> int:
        return self.inserts + self.updates + self.deletes + self.truncates

    def add(self, other: "Counts") -> None:
        for name in vars(other):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class KeyState:
    """The keys one writer owns in one table: live now, or deleted and free to insert again."""
    live: set[int] = field(default_factory=set)
    deleted: set[int] = field(default_factory=set)
    next_key: int = 0


class Writer:
    """One connection; owns keys n with n % writers == index, so writers never conflict."""

    def __init__(self, db: Database, index: int, writers: int, seed: int) -> None:
        self.db, self.index, self.writers = db, index, writers
        self.rng = random.Random(seed * 1000 + index)
        self.keys = {t.name: KeyState(next_key=index + writers) for t in db.tables}
        self.counts = Counts()

    def new_key(self, table: SourceTable) -> int:
        state = self.keys[table.name]
        n = state.next_key
        state.next_key += self.writers
        return n

    def run(self, changes: int, rate: float | None = None) -> None:
        """Commit transactions until this writer has made at least `changes` row changes, at
        about `rate` changes per second if given."""
        conn = self.db.connect()
        start, first = time.monotonic(), self.counts.changes
        try:
            while self.counts.changes < changes:
                self.transaction(conn)
                if rate:
                    ahead = (self.counts.changes - first) / rate - (time.monotonic() - start)
                    time.sleep(max(0.0, ahead))
        finally:
            conn.close()

    def transaction(self, conn: Any) -> None:
        saved = {name: KeyState(set(s.live), set(s.deleted), s.next_key) for name, s in self.keys.items()}
        pending = Counts(transactions=1)
        try:
            with conn.cursor() as cur:
                for _ in range(self.rng.randint(1, 4)):
                    self.statement(cur, self.rng.choice(self.db.tables), pending)
        except Exception as exc:   # a deadlock between writers: nothing committed, try another
            if not self.db.retryable(exc):
                raise
            conn.rollback()
            self.keys = saved
            return
        if self.rng.random() < 0.04:
            conn.rollback()
            self.keys = saved
            self.counts.rollbacks += 1
        else:
            conn.commit()
            self.counts.add(pending)

    def statement(self, cur: Any, table: SourceTable, counts: Counts) -> None:
        state = self.keys[table.name]
        roll = self.rng.random()
        if roll < 0.30 or len(state.live) < 4:
            self.insert(cur, table, counts, reinsert=bool(state.deleted) and self.rng.random() < 0.3)
        elif roll < 0.70:
            self.update(cur, table, counts)
        elif roll < 0.90:
            self.delete(cur, table, counts)
        elif len(table.keys) == 1:
            self.change_key(cur, table, counts)
        else:
            self.update(cur, table, counts)

    def insert(self, cur: Any, table: SourceTable, counts: Counts, reinsert: bool) -> None:
        state = self.keys[table.name]
        pool = sorted(state.deleted) if reinsert else []
        ns = self.rng.sample(pool, min(len(pool), self.rng.randint(1, 3))) if pool else \
            [self.new_key(table) for _ in range(self.rng.randint(1, 5))]
        rows = [row_for(table, table.key_of(n), self.rng) for n in ns]
        cols = table.columns
        one = "(" + ", ".join(self.db.placeholder(c.kind) for c in cols) + ")"
        sql = f"INSERT INTO {table.name} ({', '.join(c.name for c in cols)}) VALUES " + ", ".join([one] * len(rows))
        cur.execute(sql, [self.db.param(c.kind, r[c.name]) for r in rows for c in cols])
        state.live.update(ns)
        state.deleted.difference_update(ns)
        counts.inserts += len(rows)

    def _pick(self, table: SourceTable, most: int) -> list[int]:
        live = sorted(self.keys[table.name].live)
        return self.rng.sample(live, min(len(live), self.rng.randint(1, most)))

    def _where(self, table: SourceTable, ns: list[int]) -> tuple[str, list[Any]]:
        cols = "(" + ", ".join(table.keys) + ")"
        one = "(" + ", ".join(["%s"] * len(table.keys)) + ")"
        return f"{cols} IN ({', '.join([one] * len(ns))})", [v for n in ns for v in table.key_of(n)]

    def update(self, cur: Any, table: SourceTable, counts: Counts) -> None:
        """A multi-row update of one or two ordinary columns; the large text only now and then."""
        ns = self._pick(table, 4)
        candidates = [c for c in table.value_columns if c.kind != "bigtext" or self.rng.random() < 0.1]
        cols = self.rng.sample(candidates, min(len(candidates), self.rng.randint(1, 2)))
        sets = ", ".join(f"{c.name} = {self.db.placeholder(c.kind)}" for c in cols)
        where, args = self._where(table, ns)
        cur.execute(f"UPDATE {table.name} SET {sets} WHERE {where}",
                    [self.db.param(c.kind, value_for(c, self.rng)) for c in cols] + args)
        counts.updates += cur.rowcount

    def delete(self, cur: Any, table: SourceTable, counts: Counts) -> None:
        ns = self._pick(table, 3)
        where, args = self._where(table, ns)
        cur.execute(f"DELETE FROM {table.name} WHERE {where}", args)
        state = self.keys[table.name]
        state.live.difference_update(ns)
        state.deleted.update(ns)
        counts.deletes += cur.rowcount

    def change_key(self, cur: Any, table: SourceTable, counts: Counts) -> None:
        """UPDATE of the primary key: Debezium emits a delete of the old key and a create of the new."""
        [old] = self._pick(table, 1)
        new = self.new_key(table)
        key = table.keys[0]
        cur.execute(f"UPDATE {table.name} SET {key} = %s WHERE {key} = %s", [new, old])
        state = self.keys[table.name]
        state.live.discard(old)
        state.deleted.add(old)
        state.live.add(new)
        counts.deletes += 1
        counts.inserts += 1


class Workload:
    """Writers that keep their keys across runs, so a later run continues an earlier one."""

    def __init__(self, db: Database, writers: int = 3, seed: int = 7) -> None:
        self.db = db
        self.writers = [Writer(db, i, writers, seed) for i in range(writers)]
        self.counts = Counts()

    def run(self, changes: int, rate: float | None = None) -> Counts:
        """About `changes` row changes from all writers at once, at about `rate` changes per
        second in all; returns what this run committed."""
        before = [Counts(**vars(w.counts)) for w in self.writers]
        share = -(-changes // len(self.writers))
        errors: list[BaseException] = []

        def run(writer: Writer, target: int) -> None:
            try:
                writer.run(target, rate / len(self.writers) if rate else None)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(w, b.changes + share)) for w, b in zip(self.writers, before)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        done = Counts()
        for w, b in zip(self.writers, before):
            for name in vars(done):
                setattr(done, name, getattr(done, name) + getattr(w.counts, name) - getattr(b, name))
        self.counts.add(done)
        return done

    def truncate(self, table_name: str) -> None:
        """TRUNCATE one table; its keys become free to insert again."""
        conn = self.db.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"TRUNCATE TABLE {table_name}")
            conn.commit()
        finally:
            conn.close()
        for w in self.writers:
            state = w.keys[table_name]
            state.deleted.update(state.live)
            state.live.clear()
        self.counts.truncates += 1

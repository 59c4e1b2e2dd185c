"""A realistic Debezium stream for the benchmarks, and the table state it must produce.

Postgres flavour (lsn positions), rows of about 500 bytes of JSON, 10% inserts, 80% updates,
10% deletes, a share of updates that carry the TOAST placeholder for the unchanged `note`
column (REPLICA IDENTITY DEFAULT), with or without the schema wrapper. Keys are updated and
deleted uniformly (profile `uniform`), or as OLTP tables behave (profile `recent`): new keys at
the top of the key range, and most updates and deletes to the newest few percent of keys. Profile
`snapshot` is Debezium's initial snapshot instead: one `op=r` event per new key, in key order, all
at the snapshot's one lsn (as Postgres sends them), for an empty table. Every row value follows
from (key, rev, note_rev), so the expected table needs only those per key: the comparison
reads `id`, `rev` and the head of `note` and counts the keys an engine got wrong.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Iterator

from devtools.encode import EventWriter
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER

TABLE = "orders"
COLUMNS = {"id": "bigint", "customer": "bigint", "status": "string", "amount": "decimal(12,2)",
           "note": "string", "updated_at": "timestamp", "rev": "bigint"}
STATUSES = ("new", "paid", "shipped", "cancelled")
NOTE_FILLER = "".join(chr(ord("a") + (i * 7) % 26) for i in range(330))
EPOCH = dt.datetime(2026, 1, 1)
PROFILES = ("uniform", "recent", "snapshot")
FIRST_LSN = 1_000_000


def note(key: int, note_rev: int) -> str:
    return f"{key}:{note_rev}:{NOTE_FILLER}"


def note_head(key: int, note_rev: int) -> str:
    """What the comparison reads of a note: enough to tell which version it is."""
    return f"{key}:{note_rev}:"


def row(key: int, rev: int, note_rev: int) -> dict:
    return {"id": key, "customer": (key * 7919 + rev) % 100_000, "status": STATUSES[(key + rev) % 4],
            "amount": Decimal((key * 31 + rev) % 10_000_000) / 100, "note": note(key, note_rev),
            "updated_at": EPOCH + dt.timedelta(seconds=rev), "rev": rev}


@dataclass
class Stream:
    """Changes to a table that starts with keys 0..rows-1 at rev 0 (the seeded table)."""

    rows: int
    wrapped: bool = False
    toast_share: float = 0.2
    seed: int = 5
    profile: str = "uniform"      # or "recent", "snapshot"
    hot_share: float = 0.02       # recent: the newest keys that take most changes
    hot_odds: float = 0.9         # recent: the share of updates and deletes that go to them
    rnd: random.Random = field(init=False)
    alive: list[int] = field(init=False)
    place: dict[int, int] = field(init=False)   # key -> its index in alive
    changed: dict[int, tuple[int, int] | None] = field(default_factory=dict)  # key -> (rev, note_rev) | deleted
    next_key: int = field(init=False)
    lsn: int = FIRST_LSN

    def __post_init__(self) -> None:
        self.rnd = random.Random(self.seed)
        if self.profile not in PROFILES:
            raise ValueError(f"stream profile {self.profile!r}: expected one of {', '.join(PROFILES)}")
        self.alive = list(range(self.rows))
        self.place = {k: i for i, k in enumerate(self.alive)}
        self.next_key = self.rows
        self.writer = EventWriter("postgresql", TABLE, COLUMNS, wrapped=self.wrapped, db="bench")

    def events(self, n: int, ts_ms: int | None = None) -> Iterator[tuple[bytes, bytes | None]]:
        """n change events as Kafka (key, value) records; a delete is followed by its Kafka
        tombstone (not counted in n). `ts_ms` defaults to the time of generation."""
        for _ in range(n):
            yield from self._one(ts_ms if ts_ms is not None else int(time.time() * 1000))

    def _one(self, ts_ms: int) -> Iterator[tuple[bytes, bytes | None]]:
        if self.profile == "snapshot":
            yield self._snapshot_read(ts_ms)
            return
        self.lsn += 8
        r = self.rnd.random()
        if r < 0.1 or len(self.alive) < 2:
            key, rev, note_rev = self.next_key, 1, 1
            self.next_key += 1
            self.place[key] = len(self.alive)
            self.alive.append(key)
            self.changed[key] = (rev, note_rev)
            yield self._key(key), self.writer.event("c", None, row(key, rev, note_rev), self.lsn, ts_ms).encode()
        elif r < 0.9:
            key = self.alive[self._pick()]
            rev, note_rev = self.changed.get(key) or (0, 0)
            after = row(key, rev + 1, note_rev)
            if self.rnd.random() < self.toast_share:
                after["note"] = TOAST_PLACEHOLDER           # unchanged large value, not sent
            elif self.rnd.random() < 0.5:
                note_rev = rev + 1
                after["note"] = note(key, note_rev)
            self.changed[key] = (rev + 1, note_rev)
            yield self._key(key), self.writer.event("u", None, after, self.lsn, ts_ms).encode()
        else:
            i = self._pick()
            key = self.alive[i]
            self.alive[i] = self.alive[-1]
            self.place[self.alive[i]] = i
            self.alive.pop()
            del self.place[key]
            self.changed[key] = None
            yield self._key(key), self.writer.event("d", {"id": key}, None, self.lsn, ts_ms).encode()
            yield self._key(key), None

    def _snapshot_read(self, ts_ms: int) -> tuple[bytes, bytes]:
        key = self.next_key
        self.next_key += 1
        self.changed[key] = (1, 1)
        return self._key(key), self.writer.event("r", None, row(key, 1, 1), self.lsn, ts_ms, snapshot=True).encode()

    def _pick(self) -> int:
        """The index in `alive` of the key an update or delete goes to."""
        if self.profile == "recent" and self.rnd.random() < self.hot_odds:
            hot = max(100, int(self.hot_share * len(self.alive)))
            for _ in range(8):
                i = self.place.get(self.next_key - 1 - self.rnd.randrange(hot))
                if i is not None:
                    return i
        return self.rnd.randrange(len(self.alive))

    @staticmethod
    def _key(key: int) -> bytes:
        return json.dumps({"id": key}).encode()

    def expected(self, key: int) -> tuple[int, str] | None:
        """(rev, note head) the table must hold for `key`, or None when it must be absent."""
        if key in self.changed:
            state = self.changed[key]
            return None if state is None else (state[0], note_head(key, state[1]))
        return (0, note_head(key, 0)) if key < self.rows else None

    def keys_wrong(self, found: dict[int, tuple[int, str]]) -> int:
        """Keys whose row is missing, extra, or holds another rev or note than expected."""
        wrong = sum(1 for k, got in found.items() if self.expected(k) != got)
        present = self.rows - sum(1 for k, s in self.changed.items() if k < self.rows and s is None) + sum(
            1 for k, s in self.changed.items() if k >= self.rows and s is not None)
        missing = present - sum(1 for k in found if self.expected(k) is not None)
        return wrong + missing

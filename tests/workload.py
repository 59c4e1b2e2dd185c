"""Seeded random CDC workloads and their plain-Python reference replay (for tests on Kafka)."""

from __future__ import annotations

import json
import random
from decimal import Decimal

from devtools.encode import EventWriter

COLUMNS = {"id": "bigint", "v": "string", "amount": "decimal(10,2)"}
TABLE = {"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}


def history(seed: int, events: int, keys: int) -> list[tuple[str, int, dict]]:
    rnd = random.Random(seed)
    exists: set[int] = set()
    out = []
    for _ in range(events):
        key = rnd.randrange(keys)
        row = {"id": key, "v": rnd.choice(["a", "b", "c", None]), "amount": Decimal(rnd.randrange(-10**5, 10**5)) / 100}
        if key not in exists:
            out.append(("c", key, row))
            exists.add(key)
        elif rnd.random() < 0.8:
            out.append(("u", key, row))
        else:
            out.append(("d", key, {"id": key}))
            exists.discard(key)
    return out


def reference(changes) -> list[dict]:
    table: dict[int, dict] = {}
    for op, key, row in changes:
        if op == "d":
            table.pop(key, None)
        else:
            table[key] = row
    return [table[k] for k in sorted(table)]


def kafka_records(changes, seed: int, malformed: int = 0, wrapped_share: float = 0.5):
    """(key, value) records: Postgres events, a null-value tombstone after each delete, and
    `malformed` broken values spread through the stream."""
    rnd = random.Random(seed)
    writers = [EventWriter("postgresql", "items", COLUMNS, wrapped=w) for w in (False, True)]
    records = []
    for i, (op, key, row) in enumerate(changes):
        k = json.dumps({"id": key}).encode()
        writer = writers[rnd.random() < wrapped_share]
        before, after = (row, None) if op == "d" else (None, row)
        records.append((k, writer.event(op, before, after, 1000 + 10 * i, 10_000 + i // 5).encode()))
        if op == "d":
            records.append((k, None))
    for n in range(malformed):
        records.insert(rnd.randrange(len(records)), (json.dumps({"id": n}).encode(), b'{"op":"c","after":{"id":'))
    return records

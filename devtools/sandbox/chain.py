"""The chain database -> Debezium -> Kafka -> cdc-delta: the connector and pipeline config for
one source database, and the waits that tell when every change has landed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from cdc_delta.infra.kafka_io import end_offsets
from .connectors import connector_config, schemas_enabled
from .databases import Database


def topics(db: Database, prefix: str) -> dict[str, str]:
    """Debezium's topic per table: <prefix>.<schema>.<table> (Postgres) or <prefix>.<db>.<table>."""
    namespace = "public" if db.engine == "postgres" else db.database
    return {t.name: f"{prefix}.{namespace}.{t.name}" for t in db.tables}


def connector_for(db: Database, prefix: str, bootstrap: str, schemas: bool = True) -> dict[str, Any]:
    """connectors/<engine>.json pointed at this database, with topics, slot and history named by `prefix`."""
    where = {"database.hostname": db.host, "database.port": str(db.port), "database.user": db.user,
             "topic.prefix": prefix, **schemas_enabled(schemas)}
    if db.engine == "postgres":
        names = ",".join(f"public.{t.name}" for t in db.tables)
        where |= {"database.dbname": db.database, "table.include.list": names,
                  "slot.name": prefix, "publication.name": prefix}
    else:
        names = ",".join(f"{db.database}.{t.name}" for t in db.tables)
        where |= {"database.include.list": db.database, "table.include.list": names,
                  "schema.history.internal.kafka.bootstrap.servers": bootstrap,
                  "schema.history.internal.kafka.topic": f"_schema-history.{prefix}"}
    spec = connector_config(db.engine, **where)
    spec["name"] = prefix
    return spec


def pipeline_config(db: Database, prefix: str, bootstrap: str, lake: str, **settings: Any) -> dict[str, Any]:
    """A cdc-delta pipeline of every sandbox table of `db`; `settings` add or replace top-level keys."""
    by_table = topics(db, prefix)
    tables = [t.lake_spec({"topic": by_table[t.name]}) for t in db.tables]
    source = {"kind": "kafka", "bootstrap_servers": bootstrap, "topics": list(by_table.values()),
              "starting_offsets": "earliest"}
    return {"pipeline": prefix.replace("-", "_"), "source": source, "lake": lake, **settings, "tables": tables}


def wait_until_quiet(bootstrap: str, names: list[str], quiet: float = 4.0, timeout: float = 180.0) -> dict[str, dict[int, int]]:
    """End offsets once they have not moved for `quiet` seconds: the connector has sent what it read."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = end_offsets(bootstrap, names)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
        time.sleep(0.5)
    raise TimeoutError(f"topics {', '.join(names)} still growing after {timeout:.0f} s")


def wait_until_consumed(metrics_file: Path, ends: dict[str, dict[int, int]], timeout: float = 300.0,
                        alive: Any = None) -> list[dict]:
    """The batch reports (--metrics-json) once batches have read up to every end offset."""
    wanted = {f"{t}/{p}": end - 1 for t, parts in ends.items() for p, end in parts.items() if end > 0}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reports = read_reports(metrics_file)
        seen: dict[str, int] = {}
        for r in reports:
            for where, last in r["offsets"].items():
                seen[where] = max(seen.get(where, -1), last)
        if all(seen.get(w, -1) >= last for w, last in wanted.items()):
            return reports
        if alive is not None and not alive():
            raise RuntimeError("cdc-delta stopped before it caught up")
        time.sleep(1.0)
    behind = {w: (seen.get(w, -1), last) for w, last in wanted.items() if seen.get(w, -1) < last}
    raise TimeoutError(f"cdc-delta did not catch up in {timeout:.0f} s; (read, end) per partition: {behind}")


def read_reports(metrics_file: Path) -> list[dict]:
    if not metrics_file.exists():
        return []
    return [json.loads(line) for line in metrics_file.read_text().splitlines() if line.strip()]

"""`cdc-delta status`: per table the Delta version, rows, last batch and quarantine; per
partition the committed offset against the topic's end (lag)."""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from ..config.models import PipelineConfig
from ..infra.storage import Files
from ..lake.tables import DeltaLocation
from ..run.sources import source_of


def committed_offsets(files: Files) -> tuple[int | None, dict[str, dict[int, int]]]:
    """The last batch Spark committed and the source offsets it ended at."""
    commits = [int(name) for name in files.names("commits") if name.isdigit()]
    if not commits:
        return None, {}
    last = max(commits)
    lines = files.read_text("offsets", str(last)).splitlines()
    offsets: dict[str, dict[int, int]] = {}
    for line in lines[2:]:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            for topic, parts in data.items():
                if isinstance(parts, dict):
                    offsets[topic] = {int(p): int(o) for p, o in parts.items()}
    return last, offsets


def collect_status(spark: SparkSession, config: PipelineConfig) -> dict[str, Any]:
    last_batch, committed = committed_offsets(Files(spark, config.checkpoint_path))
    status: dict[str, Any] = {"pipeline": config.pipeline, "checkpoint": config.checkpoint_path,
                              "last_committed_batch": last_batch, "partitions": [], "tables": {}}
    lag = source_of(config).lag(committed)
    if lag is not None:
        status["partitions"] = lag
        status["total_lag"] = sum(p["lag"] for p in lag)
    pending = _quarantined(spark, config)
    for spec in config.tables:
        status["tables"][spec.name] = _table(spark, DeltaLocation.of(config.target_of(spec)), pending.get(spec.name, 0))
    status["quarantined_unassigned"] = pending.get(None, 0)
    return status


def _table(spark: SparkSession, where: DeltaLocation, quarantined: int) -> dict[str, Any]:
    if not where.exists(spark):
        return {"location": where.label, "exists": False, "quarantined": quarantined}
    history = where.table(spark).history(50).select("version", "timestamp", "userMetadata").collect()
    last = next((h for h in history if h["userMetadata"] and '"batch_id"' in h["userMetadata"]), None)
    meta = json.loads(last["userMetadata"]) if last else {}
    return {"location": where.label, "exists": True, "version": history[0]["version"],
            "rows": where.read(spark).count(), "last_batch": meta.get("batch_id"),
            "last_batch_at": str(last["timestamp"]) if last else None, "quarantined": quarantined,
            "toast_unresolved": _toast_unresolved(spark, where)}


def _toast_unresolved(spark: SparkSession, where: DeltaLocation) -> int:
    """NULLs written for TOAST placeholders with no earlier value known, over all batches."""
    counts = where.child("toast_unresolved")
    if not counts.exists(spark):
        return 0
    return int(counts.read(spark).agg(F.sum("values")).first()[0] or 0)


def _quarantined(spark: SparkSession, config: PipelineConfig) -> dict[str | None, int]:
    where = DeltaLocation.of(config.quarantine_location)
    if not where.exists(spark):
        return {}
    rows = (where.read(spark).filter((F.col("pipeline") == config.pipeline) & F.col("replayed_batch").isNull())
            .groupBy("table").count().collect())
    return {r["table"]: r["count"] for r in rows}


def render(status: dict[str, Any]) -> str:
    lines = [f"pipeline {status['pipeline']} (checkpoint {status['checkpoint']}): "
             f"last committed batch {status['last_committed_batch']}"]
    for p in status["partitions"]:
        lines.append(f"  {p['topic']}/{p['partition']}: committed {p['committed']}, end {p['end']}, lag {p['lag']}")
    if "total_lag" in status:
        lines.append(f"  total lag {status['total_lag']}")
    for name, t in status["tables"].items():
        if not t["exists"]:
            lines.append(f"table {name}: not created yet ({t['location']})")
            continue
        lines.append(f"table {name}: version {t['version']}, {t['rows']} rows, last batch {t['last_batch']} "
                     f"at {t['last_batch_at']}, quarantined {t['quarantined']}, "
                     f"toast unresolved {t['toast_unresolved']}")
    if status["quarantined_unassigned"]:
        lines.append(f"quarantined without a table: {status['quarantined_unassigned']}")
    return "\n".join(lines)

"""A lost checkpoint, recovered from the tables. Every commit of a batch records the pipeline,
the batch id and the last Kafka offset it read per partition (userMetadata). A run that finds no
checkpoint offsets, while the tables hold batches of its pipeline, resumes after the last batch
known complete (the newest recorded batch may have crashed between tables, so it is read again:
its MERGEs are no-ops through the position guard, and quarantine rows are not repeated). The run
writes under a new app id, since Delta's txnVersion of the old one is already past batch 0."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterable

from pyspark.sql import SparkSession

from ..config.models import PipelineConfig
from ..infra.storage import Files
from ..lake.tables import DeltaLocation
from .sources import source_of

APP_ID_FILE = "cdc_delta_app.json"
EARLIEST = -2


@dataclass(frozen=True)
class Resume:
    app_id: str
    starting_offsets: dict[str, dict[str, int]]
    complete_batch: int          # the newest batch known complete; the one after it is read again

    def describe(self, pipeline: str) -> str:
        parts = ", ".join(f"{t}/{p}@{o}" for t, ps in sorted(self.starting_offsets.items())
                          for p, o in sorted(ps.items(), key=lambda kv: int(kv[0])))
        return (f"checkpoint has no offsets but the tables record batches of pipeline {pipeline} up to "
                f"{self.complete_batch + 1}: resuming from {parts} as app id {self.app_id}")


def app_id(files: Files, config: PipelineConfig) -> str:
    """The id the pipeline's idempotent appends use with this checkpoint."""
    return json.loads(files.read_text(APP_ID_FILE))["app_id"] if files.exists(APP_ID_FILE) else config.pipeline


def has_offsets(files: Files) -> bool:
    return bool(files.names("offsets"))


def plan_resume(spark: SparkSession, config: PipelineConfig, locations: Iterable[DeltaLocation],
                partitions: dict[str, list[int]]) -> Resume | None:
    """Where a run without checkpoint offsets should start, or None when the tables hold no
    batch of this pipeline (a fresh start). `partitions`: the source's topics and partitions now."""
    own = re.compile(rf"^{re.escape(config.pipeline)}(#\d+)?$")   # not replays ("<pipeline>:replay")
    batches = [m for where in locations for m in _recorded(spark, where)
               if m.get("pipeline") == config.pipeline and own.match(str(m.get("app_id")))]
    if not batches:
        return None
    latest = max((b["app_id"] for b in batches), key=_epoch)
    newest = max(b["batch_id"] for b in batches if b["app_id"] == latest)
    read: dict[str, dict[str, int]] = {}
    for b in batches:
        if b["app_id"] == latest and b["batch_id"] == newest:
            continue
        for where, last in b.get("offsets", {}).items():
            topic, _, partition = where.rpartition("/")
            read.setdefault(topic, {})[partition] = max(last, read.get(topic, {}).get(partition, -1))
    start = {t: {str(p): read[t][str(p)] + 1 if str(p) in read.get(t, {}) else EARLIEST for p in ps}
             for t, ps in partitions.items()}
    return Resume(f"{config.pipeline}#{max(_epoch(b['app_id']) for b in batches) + 1}", start, newest - 1)


def resume_after_lost_checkpoint(spark: SparkSession, config: PipelineConfig,
                                 locations: list[DeltaLocation]) -> tuple[PipelineConfig, str, Resume | None]:
    """The config to start with (its starting offsets replaced when resuming) and the app id."""
    source, files = source_of(config), Files(spark, config.checkpoint_path)
    partitions = None if has_offsets(files) else source.partitions()
    resume = None if partitions is None else plan_resume(spark, config, locations, partitions)
    if resume is None:
        return config, app_id(files, config), None
    files.write_text(APP_ID_FILE, json.dumps({"app_id": resume.app_id}))
    return source.resumed_at(config, resume.starting_offsets), resume.app_id, resume


def _recorded(spark: SparkSession, where: DeltaLocation) -> list[dict]:
    if not where.exists(spark):
        return []
    out = []
    for row in where.table(spark).history().select("userMetadata").collect():
        try:
            meta = json.loads(row["userMetadata"] or "")
        except ValueError:
            continue
        if isinstance(meta, dict) and isinstance(meta.get("batch_id"), int):
            out.append(meta)
    return out


def _epoch(app: str) -> int:
    m = re.search(r"#(\d+)$", app)
    return int(m.group(1)) if m else 0

"""Writes every sink shares: appends a replayed batch does not repeat, and the batch's id and
offsets recorded in each Delta commit (recovery reads them back from the tables' history)."""

from __future__ import annotations

import itertools
import json
from contextlib import contextmanager
from typing import Any, Iterator

from pyspark.sql import DataFrame, SparkSession

from .tables import DeltaLocation

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
# commits read back, newest first, before an append gives up and lets Delta check
LANDED_SCAN_COMMITS = 50


@contextmanager
def commit_metadata(sessions: list[SparkSession], metadata: dict[str, Any]) -> Iterator[None]:
    """Every Delta commit inside records the batch id and source offsets it came from.

    foreachBatch hands over DataFrames of a cloned session, so the setting goes on every
    session a write may run in."""
    text = json.dumps(metadata, sort_keys=True)
    for s in sessions:
        s.conf.set(USER_METADATA, text)
    try:
        yield
    finally:
        for s in sessions:
            s.conf.unset(USER_METADATA)


def append_once(df: DataFrame, where: DeltaLocation, app_id: str, batch_id: int, locked: bool = False) -> bool:
    """An append that a replayed batch does not repeat; False when the log shows it landed.

    Delta's own check (txnAppId/txnVersion) rebuilds the table's state from its log: three jobs
    and about a second per append. Held under the writer lock on local disk, the log is read in
    the driver instead and the append is blind (one job); elsewhere Delta checks."""
    writer = df.write.format("delta").mode("append")
    metadata = df.sparkSession.conf.get(USER_METADATA, None)
    landed = batch_landed(where, json.loads(metadata)) if locked and metadata else None
    if landed:
        return False
    if landed is None:
        writer = writer.option("txnAppId", app_id).option("txnVersion", batch_id)
    if where.path:
        writer.save(where.path)
    else:
        writer.saveAsTable(where.name)
    return True


def rows_appended(where: DeltaLocation, batch_id: int) -> int:
    """The rows the newest commit of a table on local disk appended, when it is an append of
    batch `batch_id` (Delta's own count, read without a Spark job); else 0."""
    newest = next(where.commits_newest_first() or iter(()), {})
    meta = _metadata(newest)
    if newest.get("operation") != "WRITE" or meta is None or meta["batch_id"] != batch_id:
        return 0
    return int(newest.get("operationMetrics", {}).get("numOutputRows", 0))


def batch_landed(where: DeltaLocation, batch: dict[str, Any]) -> bool | None:
    """Whether the table's log holds an append of the batch (`batch`: its commit metadata),
    read newest first down to a commit of an earlier batch of the same app id. None when it can
    not tell: the table is not on local disk, or the newest commits give no answer."""
    commits = where.commits_newest_first()
    if commits is None:
        return None
    for info in itertools.islice(commits, LANDED_SCAN_COMMITS):
        meta = _metadata(info)
        if meta is None or meta.get("app_id") != batch["app_id"]:
            continue
        if meta["batch_id"] == batch["batch_id"] and info.get("operation") == "WRITE":
            return True
        if meta["batch_id"] < batch["batch_id"]:
            return False
    return None if next(commits, None) is not None else False


def _metadata(commit_info: dict[str, Any]) -> dict[str, Any] | None:
    try:
        meta = json.loads(commit_info.get("userMetadata") or "null")
    except ValueError:
        return None
    return meta if isinstance(meta, dict) and "batch_id" in meta else None

"""Writes every sink shares: appends a replayed batch does not repeat, and the batch's id and
offsets recorded in each Delta commit (recovery reads them back from the tables' history)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator

from pyspark.sql import DataFrame, SparkSession

from .tables import DeltaLocation

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


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


def append_once(df: DataFrame, where: DeltaLocation, app_id: str, batch_id: int) -> None:
    """An append that a replayed batch does not repeat (Delta's txnAppId/txnVersion)."""
    writer = df.write.format("delta").mode("append").option("txnAppId", app_id).option("txnVersion", batch_id)
    if where.path:
        writer.save(where.path)
    else:
        writer.saveAsTable(where.name)

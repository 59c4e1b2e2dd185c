"""Deletion vectors: a MERGE marks the rows it replaces, in a small file beside each data file
it touches, instead of copying every unchanged row of those files.

A current-state table is created with them (Databricks' own default for new tables; a table's
config may say `delta.enableDeletionVectors: "false"`). Delta decides how each MERGE writes by a
setting of the session it runs in; a MERGE that should copy files runs in a copy of the session
that differs in that one setting, since the tables of a batch merge side by side, each in its own
thread. When it should is the current-state sink's choice (sinks/current_state/rewrite.py)."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import SparkSession

ENABLE = "delta.enableDeletionVectors"
MARK_IN_MERGE = "spark.databricks.delta.merge.deletionVectors.persistent"


def with_deletion_vectors(properties: Mapping[str, str]) -> dict[str, str]:
    """A new table's properties: deletion vectors on, unless its config says otherwise."""
    return {ENABLE: "true", **properties}


def enabled(properties: Mapping[str, str]) -> bool:
    return properties.get(ENABLE, "").lower() == "true"


def copying_session(spark: SparkSession) -> SparkSession:
    """A copy of `spark` as it is now (its settings, among them the batch's commit metadata; the
    same cached frames and cluster) whose MERGEs copy files instead of marking rows."""
    copy = SparkSession(spark.sparkContext, spark._jsparkSession.cloneSession())
    copy.conf.set(MARK_IN_MERGE, "false")
    return copy

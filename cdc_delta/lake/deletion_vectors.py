"""Deletion vectors: a MERGE marks the rows it replaces, in a small file beside each data file
it touches, instead of copying every unchanged row of those files.

A current-state table is created with them (Databricks' own default for new tables; a table's
config may say `delta.enableDeletionVectors: "false"`). Delta decides how each MERGE writes by a
setting of the session it runs in; a MERGE that should copy files runs in a copy of the session
that differs in that one setting, since the tables of a batch merge side by side, each in its own
thread. When it should is the current-state sink's choice (sinks/current_state/rewrite.py)."""

from __future__ import annotations

from typing import Any, Mapping

from pyspark.sql import SparkSession

ENABLE = "delta.enableDeletionVectors"
MARK_IN_MERGE = "spark.databricks.delta.merge.deletionVectors.persistent"


def with_deletion_vectors(properties: Mapping[str, str]) -> dict[str, str]:
    """A new table's properties: deletion vectors on, unless its config says otherwise."""
    return {ENABLE: "true", **properties}


def enabled(properties: Mapping[str, str]) -> bool:
    return properties.get(ENABLE, "").lower() == "true"


class CopyingSession:
    """The session a MERGE that copies files runs in: a copy of the batch's session whose one
    difference is that setting. Made once per session the batches come from (a fresh copy's first
    query builds its analyzer and planner again: 0.12 to 0.22 s here), its other settings brought
    level with that session's before each MERGE (the batch's commit metadata, the decode's code
    generation)."""

    def __init__(self) -> None:
        self._of: Any = None                   # the JVM session copied
        self._copy: SparkSession | None = None
        self._settings: dict[str, str] = {}    # that session's settings as last copied

    def of(self, spark: SparkSession) -> SparkSession:
        settings = {key: value for key, value in spark.conf.getAll.items() if key != MARK_IN_MERGE}
        if self._copy is None or not self._of.equals(spark._jsparkSession):
            self._of = spark._jsparkSession
            self._copy = SparkSession(spark.sparkContext, spark._jsparkSession.cloneSession())
            self._copy.conf.set(MARK_IN_MERGE, "false")
        else:
            for key in self._settings.keys() - settings.keys():
                self._copy.conf.unset(key)
            for key, value in settings.items():
                if self._settings.get(key) != value:
                    self._copy.conf.set(key, value)
        self._settings = settings
        return self._copy

"""The history table (SCD type 2): one row per version of a key, in source order.

the batch's changes -> the change log (distinct per source position) -> the versions of the
keys they touch, computed again from the log (every key after a truncate) -> one MERGE that
replaces those keys' versions. Late changes land between the versions around them, duplicates
and replays change nothing: the history is a function of the log, and the log of the set of
changes."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...config.models import TableSpec
from ...errors import TruncateRefused
from ...frame import HISTORY_COLUMNS, OP, SEQ_COLUMN, TS_COLUMN, unavailable
from ...hooks import Hooks
from ...infra.names import col
from ...lake.tables import DeltaLocation, add_columns, columns_ddl, create_if_missing
from ...report import BatchContext, TableFigures
from ...steps.changes import ROW_OPS
from ...steps.versions import versions
from ...steps.view import TableView
from ..base import TableInput, configure_existing
from .log import ChangeLog
from .replace import Touched, append_versions, replace_versions


class History:
    def __init__(self, spark: SparkSession, spec: TableSpec, where: DeltaLocation, hooks: Hooks,
                 locked: bool = True) -> None:
        self.spark, self.spec, self.where, self.hooks, self.locked = spark, spec, where, hooks, locked
        self.name = spec.name
        self.log = ChangeLog(spark, where, locked)
        self.columns: set[str] | None = None     # the table's columns, once read

    def locations(self) -> list[DeltaLocation]:
        return [self.where, *self.log.locations()]

    def prepare(self) -> None:
        declared = {c: s.sql_type for c, s in self.spec.column_specs.items()}
        if not create_if_missing(self.spark, self.where, f"{columns_ddl(declared)}, {HISTORY_COLUMNS}",
                                 self.spec.table_properties, column_names=declared):
            configure_existing(self.spark, self.where, self.spec)
        self.log.prepare({k: declared[k] for k in self.spec.keys},
                         {c: t for c, t in declared.items() if c not in self.spec.keys})

    def close(self) -> None:
        pass

    def before_facts(self) -> None:
        pass

    def write(self, batch: BatchContext, table: TableInput) -> TableFigures:
        facts, view, figures = table.facts, table.view, TableFigures()
        truncated = "t" in facts and self._record_truncates(batch, table.changes)
        if not truncated and not any(op in facts for op in ROW_OPS):
            return figures
        self._evolve(view)
        rows = table.changes.filter(F.col(OP).isin(*ROW_OPS))
        with batch.report.phase("history"):
            logged = self.log.record(rows, view.keys, view.values, batch.app_id, batch.batch_id)
            touched = None if truncated else Touched(rows.select(*[col(k) for k in view.keys]).distinct(),
                                                     view.keys, table.key_range())
            computed = self._versions(view, touched, logged)
            if self._holds_no_versions():
                figures.written_by = "appended"
                figures.versions_written = append_versions(self.where, computed, batch.app_id, batch.batch_id)
            else:
                figures.written_by = "merged"
                figures.versions_written, figures.versions_removed = replace_versions(
                    self.where, computed, view.keys, touched)
        return figures

    def _holds_no_versions(self) -> bool:
        """Held under the writer lock, the table is as created (a new pipeline's first batch, an
        initial snapshot): the MERGE would only insert what was computed, and an append does
        that with no join against the table. A replay after the append lands merges instead."""
        return self.locked and self.where.as_created()

    def _record_truncates(self, batch: BatchContext, changes: DataFrame) -> bool:
        """Keep the batch's truncates by the table's policy; whether they close versions."""
        if self.spec.truncate == "fail":
            raise TruncateRefused(self.name)
        if self.spec.truncate == "ignore":
            return False
        self.log.record_truncates(changes.filter(F.col(OP) == "t"), batch.app_id, batch.batch_id)
        return True

    def _versions(self, view: TableView, touched: Touched | None, logged: DataFrame | None) -> DataFrame:
        """The versions of the touched keys (of every key when None), from the whole log
        (`logged`: the whole log, when the batch's changes are all it holds; else read)."""
        if logged is None:
            logged = self.log.read()
            if touched is not None:
                logged = touched.of(logged)
        events = logged
        if not self.log.holds_nothing(self.log.truncates):
            keys = logged.select(*[col(k) for k in view.keys]).distinct()
            truncates = keys.crossJoin(self.log.read_truncates().select(
                F.lit("t").alias(OP), SEQ_COLUMN, TS_COLUMN))
            events = logged.unionByName(truncates, allowMissingColumns=True)
        events = events.fillna(False, subset=[unavailable(c) for c in view.values])
        return versions(events, view.keys, view.values, self._tracked(view))

    def _tracked(self, view: TableView) -> list[str]:
        """The columns whose change opens a version; columns the table gained are tracked
        unless a track_history_column_list names the tracked ones."""
        spec = self.spec
        if spec.track_history_column_list is not None:
            return [c for c in view.values if c in spec.track_history_column_list]
        return [c for c in view.values if c not in (spec.track_history_except_column_list or [])]

    def _evolve(self, view: TableView) -> None:
        """Columns the source table gained (schema_change: evolve) are added here too."""
        if self.columns is None:
            self.columns = set(self.where.read(self.spark).columns)
        new = {c: t for c, t in view.columns.items() if c not in self.columns}
        if new:
            add_columns(self.spark, self.where, {c: t.name for c, t in new.items()})
            self.log.add_columns(new)
            self.columns.update(new)

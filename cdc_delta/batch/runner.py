"""The ``foreachBatch`` handler: one micro-batch from raw records to committed tables.

decode -> facts of what came in -> each table's view (schema changes) -> each table's changes
(key, typed columns, order, reason) -> facts of the changes -> each table's sinks in their
stages (its routes, then its own kind beside the tables `from` it), tables side by side, and
beside them the quarantine sink. The changes and their facts start on the last batch's views,
beside the first facts (_read), in a task per RECORDS_PER_TASK records.
Every write is idempotent per batch, so a batch replayed after a crash changes nothing twice.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable, TypeVar

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ..config.models import PipelineConfig
from ..errors import CdcDeltaError
from ..frame import ERROR
from ..hooks import Hooks
from ..lake.tables import DeltaLocation
from ..lake.writes import commit_metadata
from ..sinks import Quarantine, TableInput, TableSink, sinks_of
from ..sinks.quarantine import rows_of
from ..steps.changes import table_changes
from ..steps.decode import decode
from ..steps.view import TableView
from .codegen import Codegen
from .facts import count_origins, read_origins, table_facts
from .planned import planned_records
from ..report import BatchContext, BatchReport, TableFigures
from .schema import TableSchemas

TABLE_THREADS = 4
# A batch's records are read in a task per source partition; what is built from them (the
# tables' changes and facts, the quarantine rows, and so every sink's jobs) in a task per
# RECORDS_PER_TASK records: each task of a small batch's many small jobs costs the driver and
# the JVM more than its rows. The demo's batches (29 records from 8 Kafka partitions): first
# 13.55 -> 10.36 s (0.76x), later ones 0.89x (python -m benchmarks.cold_start --copies 4)
RECORDS_PER_TASK = 10_000
T, R = TypeVar("T"), TypeVar("R")


class BatchHandler:
    """Holds what stays the same between batches; ``__call__`` is given to foreachBatch.

    `locked`: the run holds the tables' writer locks (run/writer_lock.py); a user's own stream
    does not, and the tables' sinks then read what they keep in the driver again each batch."""

    def __init__(self, spark: SparkSession, config: PipelineConfig,
                 on_report: Callable[[BatchReport], None] | None = None, hooks: Hooks | None = None,
                 locked: bool = True) -> None:
        self.spark, self.config = spark, config
        self.hooks = hooks or Hooks()
        self.targets = {t.name: DeltaLocation.of(config.target_of(t)) for t in config.tables}
        # per table events are routed to, its sinks in the stages they write in (sinks/__init__.py)
        self.stages: dict[str, list[list[TableSink]]] = {
            t.name: sinks_of(spark, config, t, self.targets, self.hooks, locked) for t in config.source_tables}
        self.quarantine = Quarantine(spark, DeltaLocation.of(config.quarantine_location), locked)
        self.schemas = TableSchemas(spark, config, self.targets)
        self.codegen = Codegen(spark, lambda: self.locations)
        self.on_report = on_report or (lambda r: None)
        self.failure: CdcDeltaError | None = None
        self.crash: Exception | None = None      # the last batch's unexpected error, as raised
        self.busy = False
        self.batches_done = 0
        self.after_batch: Callable[[], None] = lambda: None
        self.app_id = config.pipeline     # another after a lost checkpoint (run/recovery.py)
        self.last_views: dict[str, TableView] | None = None   # the last batch's, a guess for this one
        self.tasks = 1    # how many tasks the batch's changes are built in; the last batch's until counted

    @property
    def locations(self) -> list[DeltaLocation]:
        """Every Delta table a batch may commit to."""
        return [where for sink in (*self.table_sinks(), self.quarantine) for where in sink.locations()]

    def prepare(self) -> None:
        """Create every table the pipeline writes, before the first batch."""
        for sink in (*self.table_sinks(), self.quarantine):
            sink.prepare()

    def close(self) -> None:
        """When the run ends: the sinks let go of what they hold open (a route's producer)."""
        for sink in self.table_sinks():
            sink.close()

    def table_sinks(self, table: str | None = None) -> list[TableSink]:
        """The sinks of one source table (of every table when None), in the order of their stages."""
        return [sink for name, stages in self.stages.items() if table in (None, name)
                for stage in stages for sink in stage]

    def __call__(self, raw: DataFrame, batch_id: int) -> None:
        self.busy = True
        try:
            report, bad = self.process(raw, batch_id)
        except CdcDeltaError as exc:
            self.failure = exc  # the runner re-raises it as a one-line error
            raise
        except Exception as exc:   # Spark reports it wrapped in a Py4J proxy message: keep the cause
            self.crash = exc
            raise
        finally:
            self.busy = False
        if bad is not None:
            bad.unpersist()
        self.batches_done += 1
        if report.records_in:
            self.on_report(report)
        self.after_batch()

    def process(self, raw: DataFrame, batch_id: int, app_id: str | None = None,
                quarantine: bool = True) -> tuple[BatchReport, DataFrame | None]:
        """Apply one batch; return its report and its quarantined rows (persisted: the caller
        unpersists them), None when nothing was quarantined."""
        started = time.monotonic()
        batch = BatchContext(self.config.pipeline, batch_id, app_id or self.app_id,
                             BatchReport(self.config.pipeline, batch_id))
        report = batch.report
        planned = planned_records(raw)
        if planned is not None:
            self._fit(planned, raw.sparkSession)
        decoded = decode(raw, self.config.source_tables, self.config.decoding.max_value_bytes,
                         self.config.unmatched == "quarantine").persist()
        changes: dict[str, DataFrame] = {}
        try:
            with self.hooks.during("read"), report.phase("read_decode"):
                read = self._read(decoded, report, changes, fitted=planned is not None)
                if read is None:
                    return report, None
                views, facts, bad_changes = read
            with (commit_metadata([self.spark, raw.sparkSession], batch.metadata),
                  ThreadPoolExecutor(max_workers=1) as beside):
                # built only when something is quarantined: persisting them plans their query
                quarantined = (beside.submit(self._quarantined, batch, raw.coalesce(self.tasks),
                                             decoded.coalesce(self.tasks), changes, bad_changes, quarantine)
                               if report.quarantined else None)
                report.tables.update(self._write_tables(batch, views, changes, facts))
                bad = quarantined.result() if quarantined is not None else None
            self.hooks.point("committed")   # tables written, the checkpoint not yet
            report.seconds = round(time.monotonic() - started, 3)
            return report, bad
        finally:   # dependents first: uncaching a frame re-plans every cached frame built on it
            for df in (*changes.values(), decoded):
                df.unpersist()

    def _read(self, decoded: DataFrame, report: BatchReport, changes: dict[str, DataFrame], fitted: bool
              ) -> tuple[dict[str, TableView], dict[str, dict[str, Row]], int] | None:
        """The batch's origins, each table's view and changes (persisted into `changes`, for the
        caller to unpersist), their facts and the number of bad changes; None for a batch of no
        records. The quarantined count goes into `report`.

        The facts job needs the views, and the views need the origins job. A table's view is
        nearly always the last batch's, so the facts job starts at once on the last batch's
        views, beside the origins job, and is kept when this batch's views turn out the same
        (the same views build the same changes); else the changes and facts are built again on
        this batch's views."""
        guess = self.last_views
        with ThreadPoolExecutor(max_workers=1) as beside:
            early = (beside.submit(self._changes_and_facts, guess, decoded.coalesce(self.tasks), changes)
                     if guess else None)
            origins = read_origins(decoded)
            if not count_origins(origins, report):
                return None
            if not fitted:
                self._fit(report.records_in, decoded.sparkSession)
            views = self._views(origins, decoded)
            kept = early is not None and views == guess   # (built in the last batch's tasks: the same rows)
            if early is not None and not kept:
                wait([early])    # a guess that failed or missed is not used, its error neither
                self._unpersist(changes)
            facts, bad_changes = (early.result() if kept else
                                  self._changes_and_facts(views, decoded.coalesce(self.tasks), changes))
        self.last_views = views
        report.quarantined = sum(r["bad"] for r in origins) + bad_changes
        return views, facts, bad_changes

    def _fit(self, records: int, session: SparkSession) -> None:
        """How the batch runs (codegen.py) and in how many tasks its changes are built, by its
        records: before its first job where the source tells them (planned.py), else once they
        are counted (until then the last batch's choice holds)."""
        self.codegen.fit(records, session)
        self.tasks = max(1, math.ceil(records / RECORDS_PER_TASK))

    def _quarantined(self, batch: BatchContext, raw: DataFrame, decoded: DataFrame, changes: dict[str, DataFrame],
                     bad_changes: int, write: bool) -> DataFrame:
        """The batch's quarantine rows, persisted, and written when `write`: beside the tables,
        which do not read them (each write is idempotent, so a batch that fails between the
        two repeats only the one missing)."""
        with batch.report.phase("quarantine"):
            values = raw if bad_changes else None   # their raw values are read again
            bad = rows_of(decoded, changes, self.config.pipeline, batch.batch_id, values).persist()
            if write:
                with self.hooks.during("quarantine"):
                    self.quarantine.write(batch, bad)
        return bad

    def _views(self, origins: list[Row], decoded: DataFrame) -> dict[str, TableView]:
        """Each table's view, tables side by side (a view may read the table's schema)."""
        specs = self.config.source_tables
        views = side_by_side(lambda spec: self.schemas.view(spec, origins, decoded), specs)
        return dict(zip((s.name for s in specs), views))

    def _changes_and_facts(self, views: dict[str, TableView], decoded: DataFrame, changes: dict[str, DataFrame]
                           ) -> tuple[dict[str, dict[str, Row]], int]:
        """Each table's changes on its view (persisted into `changes`), tables side by side: in
        a cold batch most of this is building each table's decoders from Python, call by call
        through Py4J, mostly waiting on the JVM; then, once each sink has read what it keeps
        between batches (`before_facts`), their facts, in one job."""
        def one(name: str) -> None:
            changes[name] = table_changes(decoded, views[name]).persist()

        side_by_side(one, list(views))
        for sink in self.table_sinks():
            sink.before_facts()
        return table_facts(changes, views)

    @staticmethod
    def _unpersist(changes: dict[str, DataFrame]) -> None:
        for df in changes.values():
            df.unpersist()
        changes.clear()

    def _write_tables(self, batch: BatchContext, views: dict[str, TableView], changes: dict[str, DataFrame],
                      facts: dict[str, dict]) -> dict[str, TableFigures]:
        """Each table's sinks stage by stage, tables side by side: most of a small table's time is spent
        waiting on Delta's log and commits, which overlap well (Spark runs jobs from several
        threads). The batch fails if any table fails, and a rerun repeats only what is missing."""
        def one(name: str) -> dict[str, TableFigures]:
            good = TableInput(views[name], changes[name].filter(F.col(ERROR).isNull()), facts.get(name, {}))
            figures: dict[str, TableFigures] = {}
            for stage in self.stages[name]:
                written = side_by_side(lambda sink: sink.write(batch, good), stage)
                figures.update(zip((sink.name for sink in stage), written))
            return figures

        return {n: f for figures in side_by_side(one, list(views)) for n, f in figures.items()}


def side_by_side(work: Callable[[T], R], items: list[T]) -> list[R]:
    """`work` on each item, in threads when there are several (up to TABLE_THREADS); the
    results in the items' order, the first error raised once all have ended."""
    if len(items) == 1:
        return [work(items[0])]
    with ThreadPoolExecutor(max_workers=min(len(items), TABLE_THREADS)) as pool:
        return list(pool.map(work, items))

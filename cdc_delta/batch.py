"""The ``foreachBatch`` handler: one micro-batch from raw records to committed tables.

decode -> route -> (schema changes) -> per table: key, order, reason -> quarantine the bad ->
truncate barrier -> guard -> reduce to the last change per key -> MERGE -> tombstones.
Every write of a batch is idempotent, so a batch replayed after a crash changes nothing twice.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Callable

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from .changes import ROW_OPS, TableView, carry_across_key_change, reduce_to_last_change, route, table_changes, unmatched_reason
from .config.models import PipelineConfig, TableSpec
from .config.types import parse_sql_type
from .debezium.connect_schema import image_fields, infer_json_type, lossless
from .debezium.envelope import parse_envelopes
from .field_names import FieldNames
from .hooks import Hooks
from .errors import CdcDeltaError, SchemaChangeRefused, TruncateRefused
from .lake import apply as lake
from .lake.guard import GuardBounds, guard, seq_literal
from .lake.tables import DeltaLocation, add_columns, columns_ddl, create_if_missing, table_columns, META_COLUMNS
from .metrics import BatchReport, TableFigures
from .names import col
from .quarantine import ensure_quarantine, quarantine_rows, write_quarantine
from .writer_lock import holding_all

GC_EVERY_BATCHES = 10
SAMPLE_VALUES = 1000
# a key change whose delete landed in an earlier batch finds the old row this many versions back
KEY_CHANGE_LOOKBACK_VERSIONS = 8
TABLE_THREADS = 4


class BatchHandler:
    """Holds what stays the same between batches; ``__call__`` is given to foreachBatch."""

    def __init__(self, spark: SparkSession, config: PipelineConfig,
                 on_report: Callable[[BatchReport], None] | None = None, hooks: Hooks | None = None) -> None:
        self.spark, self.config = spark, config
        self.hooks = hooks or Hooks()
        self.targets = {t.name: DeltaLocation.of(config.target_of(t)) for t in config.tables}
        self.quarantine = DeltaLocation.of(config.quarantine_location)
        self.on_report = on_report or (lambda r: None)
        self.failure: CdcDeltaError | None = None
        self.crash: Exception | None = None      # the last batch's unexpected error, as raised
        self.busy = False
        self.batches_done = 0
        self.after_batch: Callable[[], None] = lambda: None
        self.app_id = config.pipeline     # another after a lost checkpoint (recovery.py)
        self.bounds: dict[str, GuardBounds] = {}   # per table: see _load_bounds
        self.case_sensitive = spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
        self.locked = True    # the run holds the tables' writer locks (not so in a user's stream)

    @property
    def locations(self) -> list[DeltaLocation]:
        """Every Delta table a batch may commit to."""
        companions = [t.child(c) for t in self.targets.values() for c in ("tombstones", "truncates")]
        return [*self.targets.values(), *companions, self.quarantine]

    def lock_tables(self) -> ExitStack:
        """The writer lock of each path table (close the stack to release them): the guard's
        positions kept in the driver hold only while no other process writes the tables."""
        return holding_all({f"table {name}": where.path for name, where in self.targets.items() if where.path},
                           self.config.pipeline)

    def prepare(self) -> None:
        """Create every table the pipeline writes, before the first batch."""
        for spec in self.config.tables:
            where = self.targets[spec.name]
            declared = {c: s.sql_type for c, s in spec.column_specs.items()}
            create_if_missing(self.spark, where, f"{columns_ddl(declared)}, {META_COLUMNS}", spec.table_properties,
                              column_names=declared)
            lake.ensure_companions(self.spark, where, columns_ddl({k: declared[k] for k in spec.keys}), spec.keys)
        ensure_quarantine(self.spark, self.quarantine)

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
        unpersists them)."""
        started = time.monotonic()
        app_id = app_id or self.app_id
        report = BatchReport(self.config.pipeline, batch_id)
        routed = self._routed(raw).persist()
        changes: dict[str, DataFrame] = {}
        try:
            with self.hooks.during("read"), report.phase("read_decode"):
                summary = _summary(routed)
                if not _count_origins(summary, report):
                    return report, None
                views = self._views(summary, routed)
                changes = {n: table_changes(routed, v).persist() for n, v in views.items()}
                self._load_bounds(views)
                stats, errors = _op_stats(changes, views, self.bounds)
                report.quarantined = sum(r["bad"] for r in summary) + errors
                bad = self._quarantined(routed, changes, batch_id).persist()
            metadata = {"pipeline": self.config.pipeline, "batch_id": batch_id, "app_id": app_id,
                        "offsets": report.offsets}
            with lake.commit_metadata([self.spark, raw.sparkSession], metadata):
                if quarantine and report.quarantined:
                    with self.hooks.during("quarantine"), report.phase("quarantine"):
                        write_quarantine(bad, self.quarantine, app_id, batch_id)
                report.tables.update(self._apply_tables(views, changes, stats, batch_id, app_id, report))
            self.hooks.point("committed")   # tables written, the checkpoint not yet
            report.seconds = round(time.monotonic() - started, 3)
            return report, bad
        finally:
            for df in (routed, *changes.values()):
                df.unpersist()

    def _load_bounds(self, views: dict[str, TableView]) -> None:
        """The guard's positions of each table in the batch: read at its first batch, or at every
        batch where no writer lock keeps other writers away (a catalog table, a user's stream)."""
        for name in views:
            if name not in self.bounds or not self.targets[name].path or not self.locked:
                self.bounds[name] = GuardBounds.load(self.spark, self.targets[name])

    def _routed(self, raw: DataFrame) -> DataFrame:
        routed = route(parse_envelopes(raw, self.config.decoding.max_value_bytes), list(self.config.tables))
        unmatched = F.col("_cdc_table").isNull() & ~F.col("_cdc_is_tombstone")
        if self.config.unmatched == "quarantine":
            routed = routed.withColumn("_cdc_error", F.coalesce(
                "_cdc_error", F.when(unmatched & F.col("_cdc_op").isNotNull(), unmatched_reason())))
        return routed

    def _quarantined(self, routed: DataFrame, changes: dict[str, DataFrame], batch_id: int) -> DataFrame:
        pipeline = self.config.pipeline
        envelope_bad = routed.filter(F.col("_cdc_table").isNull() & F.col("_cdc_error").isNotNull())
        parts = [quarantine_rows(envelope_bad, pipeline, batch_id)]
        for name, df in changes.items():
            bad = df.filter(F.col("_cdc_error").isNotNull()).withColumn("_cdc_table", F.lit(name))
            parts.append(quarantine_rows(bad, pipeline, batch_id))
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        return out

    # --- schema: what the events carry against what the tables hold -------------------------

    def _views(self, summary: list[Row], routed: DataFrame) -> dict[str, TableView]:
        seen: dict[str, list[Row]] = {}
        for r in summary:
            if r["_cdc_table"] is not None and r["schema_keys"] is not None:
                seen.setdefault(r["_cdc_table"], []).append(r)
        return {spec.name: self._view(spec, seen.get(spec.name, []), routed) for spec in self.config.tables}

    def _view(self, spec: TableSpec, seen: list[Row], routed: DataFrame) -> TableView:
        where = self.targets[spec.name]
        names = FieldNames(self.case_sensitive)
        names.refuse_clashes(spec.name, [r["clash"] for r in seen if r["clash"]])
        existing = table_columns(self.spark, where)
        columns = {c: s.sql_type for c, s in spec.column_specs.items()}
        if spec.schema_change == "evolve" and not spec.column_list:
            columns.update({c: t for c, t in existing.items() if not names.among(c, spec.columns)})
        schemas = {r["_cdc_schema_id"]: r["schema"] for r in seen if r["schema"]}
        variants = {i: image_fields(text) for i, text in schemas.items()}
        seen_fields = sorted({k for r in seen for k in r["schema_keys"] if k})
        new = names.new_fields(seen_fields, [*spec.columns, *columns])
        if new and spec.schema_change != "ignore" and not spec.column_list:
            columns.update(self._new_columns(spec, where, new, variants, routed))
        fields = names.spellings(seen_fields, columns)
        _check_types(spec.name, columns, variants, fields)
        encodings = {c: s.encoding for c, s in spec.columns.items()}
        return TableView(spec, columns, encodings, variants, self.config.decoding.decimal_handling, fields)

    def _new_columns(self, spec: TableSpec, where: DeltaLocation, new: list[str],
                     variants: dict, routed: DataFrame) -> dict:
        types: dict[str, str] = {}
        for name in new:
            info = next((f[name] for f in variants.values() if name in f), None)
            if spec.schema_change == "fail":
                raise SchemaChangeRefused(spec.name, name, None, info.label if info else "an undeclared column",
                                          "the table's policy is 'schema_change: fail'; declare the column "
                                          "in the config, or set schema_change: evolve or ignore")
            types[name] = info.evolved_type() if info else ""
        untyped = [c for c, t in types.items() if not t]
        if untyped:
            types.update(_infer_types(routed, spec.name, untyped))
        add_columns(self.spark, where, types)
        return {c: parse_sql_type(t) for c, t in types.items()}

    # --- applying one table -----------------------------------------------------------------

    def _apply_tables(self, views: dict[str, TableView], changes: dict[str, DataFrame],
                      stats: dict[str, dict[str, Row]], batch_id: int, app_id: str,
                      report: BatchReport) -> dict[str, TableFigures]:
        """Each table's changes, tables side by side: most of a small table's time is spent
        waiting on Delta's log and commits, which overlap well (Spark runs jobs from several
        threads). The batch fails if any table fails, and a rerun repeats only what is missing."""
        def one(name: str) -> tuple[str, TableFigures]:
            good = changes[name].filter(F.col("_cdc_error").isNull())
            return name, self._apply_table(views[name], good, stats.get(name, {}), batch_id, app_id, report)

        if len(views) == 1:
            return dict(map(one, views))
        with ThreadPoolExecutor(max_workers=min(len(views), TABLE_THREADS)) as pool:
            return dict(pool.map(one, views))

    def _apply_table(self, view: TableView, good: DataFrame, stats: dict[str, Row], batch_id: int,
                     app_id: str, report: BatchReport) -> TableFigures:
        """`stats`: per op of the table's good changes, their count, newest position and
        source time, and how many change the key."""
        where = self.targets[view.name]
        figures = TableFigures()
        figures.events = sum(r["n"] for r in stats.values())
        rows = good.filter(F.col("_cdc_op").isin(*ROW_OPS))
        if "t" in stats:
            with report.phase("truncate"):
                rows = self._truncate(view, where, stats["t"], rows, figures, batch_id, app_id)
        if any(op in stats for op in ROW_OPS):
            with report.phase("guard"):
                older = any(r["older_than_tombstone"] for r in stats.values())
                rows = guard(self.spark, rows, where, view.keys, self.bounds[view.name], older)
            with report.phase("reduce"):
                if sum(r["key_changes"] for r in stats.values()):
                    stored = where.recent_rows(self.spark, KEY_CHANGE_LOOKBACK_VERSIONS)
                    rows = carry_across_key_change(rows, stored, view)
                changes = reduce_to_last_change(rows, view).persist()
            if sum(r["placeholders"] for r in stats.values()):
                with report.phase("toast"):
                    figures.toast_unresolved_columns = lake.count_unresolved(
                        self.spark, where, changes, view.keys, view.values)
            if "d" in stats:   # raised before the write: a tombstone may land without its MERGE
                self.bounds[view.name].raise_tombstone(stats["d"]["seq"])
            with self.hooks.during("merge"), report.phase("merge"):
                figures.inserted, figures.updated, figures.deleted = lake.merge_changes(
                    self.spark, where, changes, view.keys, view.values, "d" in stats, batch_id, app_id)
                lake.record_unresolved(self.spark, where, figures.toast_unresolved_columns, batch_id, app_id)
            changes.unpersist()
        newest = max((r["ts"] for r in stats.values() if r["ts"] is not None), default=None)
        if newest is not None:
            report.saw_source_time(newest)
        if newest is not None and batch_id % GC_EVERY_BATCHES == 0:
            figures.tombstones_collected = lake.collect_tombstones(
                self.spark, where, newest, view.spec.retention_ms)
        return figures

    def _truncate(self, view: TableView, where: DeltaLocation, stat: Row, rows: DataFrame,
                  figures: TableFigures, batch_id: int, app_id: str) -> DataFrame:
        policy = view.spec.truncate
        if policy == "fail":
            raise TruncateRefused(view.name)
        if policy == "ignore":
            return rows
        figures.truncates = stat["n"]
        self.bounds[view.name].raise_truncate(stat["seq"])
        figures.truncated_rows = lake.apply_truncate(self.spark, where, stat["seq"], stat["ts"],
                                                     batch_id, f"{app_id}:truncate")
        return rows.filter(F.col("_cdc_seq") > seq_literal(stat["seq"]))


def _summary(routed: DataFrame) -> list[Row]:
    """One pass over the batch: per topic-partition or file, table and event schema, the records,
    Kafka tombstones, last offset and envelope errors; for applicable events, the schema text
    and the image's column names (few distinct sets per batch)."""
    ok = F.col("_cdc_table").isNotNull() & F.col("_cdc_error").isNull()
    envelope_bad = F.col("_cdc_table").isNull() & F.col("_cdc_error").isNotNull()
    image = F.when(F.col("_cdc_op") == "d", F.col("_cdc_before")).otherwise(F.col("_cdc_after"))
    names = F.map_keys(image)
    key_sets = F.collect_set(F.when(ok, F.array_sort(names)))
    # two fields of one image whose names differ only by case (one column under Spark's rule)
    folded = F.size(F.array_distinct(F.transform(names, F.lower))) < F.size(names)
    return (routed.groupBy("_cdc_topic", "_cdc_partition", "_cdc_origin", "_cdc_table", "_cdc_schema_id")
            .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("_cdc_is_tombstone").cast("int")).alias("tomb"),
                 F.max("_cdc_offset").alias("last"), F.sum(envelope_bad.cast("int")).alias("bad"),
                 F.any_value(F.when(ok, F.col("_cdc_schema")), True).alias("schema"),
                 F.when(F.max(ok.cast("int")) == 1, F.array_distinct(F.flatten(key_sets))).alias("schema_keys"),
                 F.any_value(F.when(ok & folded, F.array_sort(names)), True).alias("clash"))
            .collect())


def _count_origins(summary: list[Row], report: BatchReport) -> int:
    """Records in, Kafka tombstones and the end offset of each topic-partition or file."""
    for r in summary:
        report.records_in += r["n"]
        report.kafka_tombstones += r["tomb"] or 0
        where = r["_cdc_origin"] or f"{r['_cdc_topic']}/{r['_cdc_partition']}"
        report.offsets[where] = max(r["last"], report.offsets.get(where, r["last"]))
    return report.records_in


def _op_stats(changes: dict[str, DataFrame], views: dict[str, TableView],
              bounds: dict[str, GuardBounds]) -> tuple[dict[str, dict[str, Row]], int]:
    """One job for all tables: per table and op of its good changes, the count, newest position,
    newest source time, key changes and changes older than the table's newest tombstone; and
    the number of bad changes of all tables."""
    parts = [df.select(F.lit(name).alias("table"), "_cdc_op", F.col("_cdc_error").isNull().alias("ok"),
                       "_cdc_seq", "_cdc_source_ts", F.col(f"_cdc_ok_{views[name].keys[0]}").isNotNull().alias("kc"),
                       bounds[name].older_than_tombstone().alias("older"), _any_placeholder(views[name]).alias("ph"))
             for name, df in changes.items()]
    every = parts[0]
    for p in parts[1:]:
        every = every.unionAll(p)
    rows = every.groupBy("table", "_cdc_op", "ok").agg(
        F.count(F.lit(1)).alias("n"), F.max("_cdc_seq").alias("seq"), F.max("_cdc_source_ts").alias("ts"),
        F.sum(F.col("kc").cast("int")).alias("key_changes"),
        F.sum(F.col("older").cast("int")).alias("older_than_tombstone"),
        F.sum(F.col("ph").cast("int")).alias("placeholders")).collect()
    stats: dict[str, dict[str, Row]] = {}
    for r in rows:
        if r["ok"]:
            stats.setdefault(r["table"], {})[r["_cdc_op"]] = r
    return stats, sum(r["n"] for r in rows if not r["ok"])


def _any_placeholder(view: TableView):
    """The change still has a TOAST placeholder after its own `before` image was asked."""
    flags = [col(f"_cdc_u_{c}") for c in view.values]
    return F.greatest(*flags) if len(flags) > 1 else (flags[0] if flags else F.lit(False))


def _infer_types(routed: DataFrame, table: str, cols: list[str]) -> dict[str, str]:
    """Types of columns that appear in events without a schema, from their values."""
    image = F.col("_cdc_after")
    picked = [F.try_element_at(image, F.lit(c)).cast("string").alias(c) for c in cols]
    sample = (routed.filter((F.col("_cdc_table") == table) & image.isNotNull())
              .select(*picked).limit(SAMPLE_VALUES).collect())
    return {c: infer_json_type([r[c] for r in sample]) for c in cols}


def _check_types(table: str, columns: dict, variants: dict, spellings: dict[str, tuple[str, ...]]) -> None:
    """Refuse a batch whose event schema would lose data in a column's current type."""
    column_of = {name: c for c, names in spellings.items() for name in names}
    for fields in variants.values():
        for field_name, info in fields.items():
            column = column_of.get(field_name, field_name)
            if column in columns and not lossless(info, columns[column]):
                raise SchemaChangeRefused(
                    table, column, columns[column].name, info.label,
                    f"converting {info.label} values to {columns[column].name} would lose data; "
                    "change the column's type in the source back, or migrate the Delta table "
                    "and the config to a type that holds both")

"""The current-state table (SCD type 1): one row per key, as the source has it now.

truncate -> guard -> (key changes) -> reduce to the last change per key -> MERGE (an append when
no change can match a stored row), beside it the tombstones and (placeholders) the unresolved
TOAST count -> now and then, old tombstones collected."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Callable

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ...report import BatchContext
from ...report import TableFigures
from ...config.models import TableSpec
from ...errors import TruncateRefused
from ...frame import OP, SEQ_COLUMN
from ...hooks import Hooks
from ...infra.conditions import all_of
from ...infra.names import col, quote
from ...lake import deletion_vectors, file_stats
from ...lake.statistics import keep_stats_property, with_stats_property
from ...lake.tables import META_COLUMNS, DeltaLocation, columns_ddl, create_if_missing, table_properties
from ...steps.changes import ROW_OPS
from ...steps.guard import guard
from ...steps.news import news
from ...steps.position import oldest, possibly_after
from ...steps.reduce import reduce_to_last_change
from ...steps.truncate_barrier import after_truncate
from ..base import TableInput, configure_existing
from . import companions
from .bounds import GuardBounds
from .key_change import carry_across_key_change
from .key_span import KeySpan, Span, edge_worth_looking_up
from .merge import count_unresolved, merge_changes
from .recent_tombstones import MAX_ROWS_HELD, RecentTombstones, as_frame, held_copy
from .rewrite import RewriteChoice
from .top_keys import TopKeys, top_floor, written_top

GC_EVERY_BATCHES = 10
# a key change whose delete landed in an earlier batch finds the old row this many versions back
KEY_CHANGE_LOOKBACK_VERSIONS = 8


class CurrentState:
    """`locked`: the run holds the table's writer lock, so the guard's positions kept in the
    driver stay true between batches; without it (a user's stream, a catalog table, a table on
    an object store) they are read again at every batch."""

    def __init__(self, spark: SparkSession, spec: TableSpec, where: DeltaLocation, hooks: Hooks,
                 locked: bool = True) -> None:
        self.spark, self.spec, self.where, self.hooks, self.locked = spark, spec, where, hooks, locked
        self.name = spec.name
        self.bounds: GuardBounds | None = None
        self.recent: RecentTombstones[DataFrame] | None = None   # only where the bounds are kept
        self.span: KeySpan | None = None
        self.top: TopKeys | None = None    # the keys the last append wrote at the top of the span
        self.stats_for: set[str] = set()   # the columns the table's statistics property names
        self.rewrite: RewriteChoice | None = None   # where the table has deletion vectors
        self.copying = deletion_vectors.CopyingSession()

    @property
    def held(self) -> bool:
        """The run holds the table's writer lock: `locked`, and on this machine's disk (a table
        on an object store or in a catalog can not be locked, and another writer may commit)."""
        return self.locked and self.where.local_folder is not None

    def locations(self) -> list[DeltaLocation]:
        return [self.where, *(self.where.child(c) for c in ("tombstones", "truncates"))]

    def prepare(self) -> None:
        declared = {c: s.sql_type for c, s in self.spec.column_specs.items()}
        properties = deletion_vectors.with_deletion_vectors(with_stats_property(self.spec.table_properties, declared))
        created = create_if_missing(self.spark, self.where, f"{columns_ddl(declared)}, {META_COLUMNS}", properties,
                                    column_names=declared)
        if created:
            self.stats_for = set(declared)
        else:
            configure_existing(self.spark, self.where, self.spec)
        if deletion_vectors.enabled(properties if created else table_properties(self.spark, self.where)):
            self.rewrite = RewriteChoice(partial(self.where.checksum, self.spark), self._count_rows)
        companions.ensure_companions(self.spark, self.where, columns_ddl({k: declared[k] for k in self.spec.keys}),
                                     self.spec.keys)

    def close(self) -> None:
        pass

    def before_facts(self) -> None:
        if self.bounds is None or not self.held:
            self.bounds = self._load_bounds()
            self.recent = RecentTombstones(self.bounds.tombstone) if self.held else None

    def write(self, batch: BatchContext, table: TableInput) -> TableFigures:
        facts, report = table.facts, batch.report
        figures = TableFigures(events=sum(r["n"] for r in facts.values()))
        collect = batch.batch_id % GC_EVERY_BATCHES == 0 and self._held_tombstones()
        if set(table.view.columns) != self.stats_for:   # columns added, or a restart
            keep_stats_property(self.spark, self.where, self.spec.table_properties, table.view.columns)
            self.stats_for = set(table.view.columns)
        rows = table.changes.filter(F.col(OP).isin(*ROW_OPS))
        if "t" in facts:
            with report.phase("truncate"):
                rows = self._truncate(batch, facts["t"], rows, figures)
        if any(op in facts for op in ROW_OPS):
            self._merge(batch, table, rows, figures)
        newest = max((r["ts"] for r in facts.values() if r["ts"] is not None), default=None)
        if newest is not None:
            report.saw_source_time(newest)
            if collect:
                figures.tombstones_collected = companions.collect_tombstones(
                    self.spark, self.where, newest, self.spec.retention_ms)
                if figures.tombstones_collected:
                    self._forget_recent()
        return figures

    def _merge(self, batch: BatchContext, table: TableInput, rows: DataFrame, figures: TableFigures) -> None:
        view, facts, report = table.view, table.facts, batch.report
        keys_within, appendable, edge = self._place_batch_keys(table)
        with report.phase("guard"):
            rows = guard(rows, view.keys, self._tombstones_to_check(facts), self.bounds.truncate)
        with report.phase("reduce"):
            if sum(r["key_changes"] for r in facts.values()):
                stored = self.where.recent_rows(self.spark, KEY_CHANGE_LOOKBACK_VERSIONS)
                rows = carry_across_key_change(rows, stored, view)
            toasted = sorted({c for r in facts.values() for c in r["placeholder_columns"]})
            # computed once, by the first of the MERGE, the tombstone append and the TOAST count
            # to read it (Spark builds a cached frame once; the others wait for its blocks)
            changes = reduce_to_last_change(rows, view, toasted).persist()
        try:
            if "d" in facts:   # raised before the write: a tombstone may land without its MERGE
                self.bounds.raise_tombstone(facts["d"]["seq"])
            with self.hooks.during("merge"), report.phase("merge"), ThreadPoolExecutor(max_workers=1) as beside:
                new_keys_only = appendable and (edge is None or not self._stores_any(changes, view.keys, edge))
                figures.written_by = "appended" if new_keys_only else "merged"
                copies = not new_keys_only and self.rewrite is not None and self.rewrite.copies(
                    sum(facts[op]["n"] for op in ROW_OPS if op in facts))
                session = self.copying.of(changes.sparkSession) if copies else None
                unresolved = (self._count_unresolved(beside, changes, view.keys, toasted, keys_within)
                              if toasted else lambda: {})
                deletes = beside.submit(self._held_deletes, changes, view.keys, facts.get("d"))
                # held after an append that met an edge (its partitions end at different keys,
                # and the next batch's will too); an appended batch's range is `keys_within`
                floor = top_floor(keys_within, self.span.high_before) if new_keys_only and edge is not None else None
                top = beside.submit(written_top, changes, view.keys, floor) if floor is not None else None
                figures.inserted, figures.updated, figures.deleted = merge_changes(
                    self.where, changes, view.keys, view.values, "d" in facts, batch.batch_id, batch.app_id,
                    keys_within, self.locked, toasted, new_keys_only, session)
                self.top = (TopKeys(floor, self.where.newest_version(), top.result())
                            if top is not None and figures.inserted else None)
                if self.rewrite is not None:
                    self.rewrite.written(figures.inserted, figures.deleted, copies)
                figures.toast_unresolved_columns = unresolved()
                companions.record_unresolved(self.spark, self.where, figures.toast_unresolved_columns,
                                             batch.batch_id, batch.app_id, self.locked)
                self._hold(facts.get("d"), deletes.result())
        except BaseException:
            self._forget_recent()   # the tombstone append may have landed without the rest
            if self.rewrite is not None:
                self.rewrite.forget()   # and the MERGE may have
            raise
        finally:
            changes.unpersist()

    def _count_rows(self) -> int:
        """The table's rows, from its files' statistics: as the checksum lists them (without a
        Spark job), else as Delta counts them."""
        if self.where.as_created():
            return 0
        rows = file_stats.live_rows(self.where.checksum())
        return rows if rows is not None else self.where.read(self.spark).count()

    def news(self, table: TableInput) -> DataFrame:
        """The batch's distinct changes newer than what the table holds of their key (its row,
        or a tombstone) and than its last truncate, before the batch is written: what a route
        forwards. Asked after the batch's facts, so the guard's bounds are read."""
        keys = [col(k) for k in table.view.keys]
        held = None
        if not self._holds_nothing():
            held = self._read_newest(self.where).select(*keys, SEQ_COLUMN).unionByName(
                self._read_newest(self.where.child("tombstones")).select(*keys, SEQ_COLUMN))
        rows = table.changes.filter(F.col(OP).isin(*ROW_OPS))
        return news(rows, table.view.keys, held, self.bounds.truncate if self.bounds else None)

    def _held_tombstones(self) -> bool:
        """Before the batch's writes: the tombstones table may hold a tombstone to collect.
        Held under the lock and as created (a new pipeline's first batch), it holds none; this
        batch's own tombstones wait for a later collection (kept longer, they only keep
        rejecting what is older than the delete, as they should)."""
        return not (self.locked and self.where.child("tombstones").as_created())

    def _holds_nothing(self) -> bool:
        """Held under the lock, the table and its tombstones are as created (a new pipeline's
        first batch): nothing to read."""
        return self.locked and all(w.as_created() for w in (self.where, self.where.child("tombstones")))

    def _read_newest(self, where: DeltaLocation) -> DataFrame:
        """A table as its newest commit on disk has it (under the lock, what the next write
        reads): a route must not decide against a snapshot Spark kept from an earlier batch.
        The version named also keeps a frame built on it cached when the table is written:
        Delta re-caches every plan that reads a table as "latest" when it appends to it, and
        the batch's reduced changes (the guard reads the tombstones) would be computed again
        after the tombstone append, by the MERGE and the TOAST count."""
        return where.read(self.spark, where.newest_version() if self.locked else None)

    def _count_unresolved(self, beside: ThreadPoolExecutor, changes: DataFrame, keys: list[str], toasted: list[str],
                          keys_within: tuple[int, int] | None) -> Callable[[], dict[str, int]]:
        """The TOAST count of the MERGE about to run, against the version that MERGE reads.
        Under the writer lock that version is the newest on disk, so the count reads it beside
        the MERGE; otherwise another writer may commit first, and the count runs before it."""
        version = self.where.newest_version() if self.locked else None
        count = partial(count_unresolved, self.spark, self.where, changes, keys, toasted, keys_within, version)
        if version is None:
            counted = count()
            return lambda: counted
        return beside.submit(count).result

    def _place_batch_keys(self, table: TableInput) -> tuple[Span | None, bool, Span | None]:
        """The batch's range of first keys when the MERGE and the TOAST count should skip
        files by it (narrow against the keys the table holds, key_span.py), else None; whether
        the batch may be appended; and the edge of its range a stored row may have a key in.

        Appending needs the writer lock (`held`): then the span the run keeps holds every
        stored first key, and a batch wholly outside it (an initial snapshot, new keys above
        the stored ones) can not match a stored row. One that reaches into it only at a narrow
        edge is appended when no stored row has a key of that edge (`_stores_any`)."""
        if self.span is None:
            self.span = KeySpan(partial(self._stored_key_span, table.view.keys[0]))
        batch = table.key_range()
        edge = self.span.stored_part(batch) if self.held and batch is not None else None
        appendable = self.held and batch is not None and (edge is None or edge_worth_looking_up(edge, batch))
        worth_asking = self.span.worth_asking(batch)
        return (batch if worth_asking or appendable else None), appendable, edge

    def _stores_any(self, changes: DataFrame, keys: list[str], edge: Span) -> bool:
        """Whether a stored row has the key of a change whose first key lies in `edge`: one
        job, reading the keys in the edge that the last append wrote at the top of the span,
        when they answer for the table (top_keys.py), else the table's (Delta skips the files
        outside the edge), against those changes, sent to each task."""
        first = col(keys[0])
        top = self.top
        held = top is not None and top.answer_for(edge, self.where.newest_version())
        stored = top.keys if held else self._read_newest(self.where).select(*[col(k) for k in keys])
        stored = stored.filter(first.between(*edge))
        near = changes.select(*[col(k) for k in keys]).filter(first.between(*edge))
        same_key = all_of([F.col(f"t.{quote(k)}") == F.col(f"s.{quote(k)}") for k in keys])
        return bool(stored.alias("t").join(F.broadcast(near.alias("s")), same_key, "left_semi").limit(1).collect())

    def _stored_key_span(self, key: str) -> Span | None:
        """The lowest and highest stored first key, from its files' statistics: as the
        checksum lists them (without a Spark job), else as Delta answers; None when no row is
        stored."""
        if self.locked and self.where.as_created():
            return None
        checksum = self.where.checksum()
        rows = file_stats.live_rows(checksum)
        if rows == 0:
            return None
        listed = file_stats.int_bounds(checksum, key) if rows is not None else None
        if listed is not None:
            return listed
        low, high = self.where.read(self.spark).agg(F.min(col(key)), F.max(col(key))).first()
        return None if low is None else (int(low), int(high))

    def _load_bounds(self) -> GuardBounds:
        """Read from the companion tables, unless (held under the lock) they are as created:
        a new pipeline's first batch then reads neither."""
        beside = [self.where.child(c) for c in ("tombstones", "truncates")]
        if self.locked and all(c.as_created() for c in beside):
            return GuardBounds()
        return GuardBounds.load(self.spark, self.where)

    def _tombstones_to_check(self, facts: dict[str, Row]) -> DataFrame | None:
        """The tombstones after the batch's oldest change (Delta skips the files wholly before
        it, so a long-running table reads only its recent tombstones), when some change of the
        batch is older than the newest tombstone."""
        since = oldest([r["seq_min"] for r in facts.values()])
        if not self.bounds.after(since):
            return None
        if self.recent is not None and self.recent.covers(since):
            held = as_frame(self.recent.after(since))
            # rows held in the driver (at most KEEP_BATCHES x MAX_ROWS_HELD): sent to each task,
            # the changes are not shuffled for the join (Spark can not size a frame built from rows)
            return None if held is None else F.broadcast(held)
        tombstones = self._read_newest(self.where.child("tombstones"))
        return tombstones if since is None else tombstones.filter(possibly_after(F.col(SEQ_COLUMN), since))

    def _held_deletes(self, changes: DataFrame, keys: list[str], deletes: Row | None) -> DataFrame | None:
        """The batch's tombstones, read into the driver to be held for the next batches' guard
        (a small job on the cached changes, beside the MERGE); None when none are held."""
        if self.recent is None or deletes is None or deletes["n"] > MAX_ROWS_HELD:
            return None
        return held_copy(companions.tombstones_of(changes, keys))

    def _hold(self, deletes: Row | None, held: DataFrame | None) -> None:
        """After the batch's writes: its tombstones join the held ones."""
        if self.recent is None or deletes is None:
            return
        if held is None:
            self._forget_recent()
        else:
            self.recent.add(deletes["seq"], held)

    def _forget_recent(self) -> None:
        if self.recent is not None:
            self.recent.forget(self.bounds.tombstone)

    def _truncate(self, batch: BatchContext, fact: Row, rows: DataFrame, figures: TableFigures) -> DataFrame:
        policy = self.spec.truncate
        if policy == "fail":
            raise TruncateRefused(self.name)
        if policy == "ignore":
            return rows
        figures.truncates = fact["n"]
        self.bounds.raise_truncate(fact["seq"])
        if self.rewrite is not None:
            self.rewrite.forget()
        figures.truncated_rows = companions.apply_truncate(self.spark, self.where, fact["seq"], fact["ts"],
                                                           batch.batch_id, batch.append_id("truncate"), self.locked)
        return after_truncate(rows, fact["seq"])

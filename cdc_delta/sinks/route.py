"""A route: the table's news that meet a condition, forwarded to a Kafka topic exactly once.

What a route sees is the batch's distinct changes newer than the table as it was before the
batch (steps/news.py), in source order: so a table's routes are written before the table. Each
batch is one Kafka transaction of its messages and of the source offsets they were forwarded
up to (the ledger, infra/kafka_io.py). A batch replayed after a crash, or read again after a
lost checkpoint, forwards only records past the ledger: a `read_committed` consumer sees each
change once. The messages are produced from the driver, in source order."""

from __future__ import annotations

from concurrent.futures import Future
from threading import Thread
from typing import Callable, Iterator, TypeVar

from confluent_kafka import KafkaException
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..config.models import ROUTE_FIELDS, KafkaSource, PipelineConfig, Route, TableSpec
from ..errors import RouteConditionInvalid, RouteFailed, one_line
from ..frame import OFFSET, OP, PARTITION, SEQ_COLUMN, SOURCE, TOPIC, TS_COLUMN, VALUE, unavailable
from ..hooks import Hooks
from ..infra.conditions import any_of
from ..infra.kafka_io import TransactionalProducer, create_topics
from ..infra.names import col, quote
from ..lake.tables import DeltaLocation
from ..report import BatchContext, TableFigures
from ..steps.changes import ROW_OPS
from ..steps.news import SOURCE_FIELDS
from ..steps.view import TableView
from .base import TableInput
from .current_state import CurrentState

T = TypeVar("T")


class KafkaRoute:
    def __init__(self, spark: SparkSession, config: PipelineConfig, table: TableSpec, route: Route,
                 current_state: CurrentState, hooks: Hooks) -> None:
        assert isinstance(config.source, KafkaSource)    # the config refuses routes on other sources
        self.spark, self.config, self.table, self.route, self.hooks = spark, config, table, route, hooks
        self.current_state = current_state    # the table whose stored positions decide what is news
        self.name = f"{table.name}/{route.name}"
        self.producer: TransactionalProducer | None = None
        self.opening: Future[TransactionalProducer] | None = None    # a producer opened beside a batch

    @property
    def transactional_id(self) -> str:
        return f"cdc-delta.{self.config.pipeline}.{self.table.name}.{self.route.name}"

    def locations(self) -> list[DeltaLocation]:
        return []

    def prepare(self) -> None:
        """Check the condition against the table's declared columns (before any Kafka or batch
        work), then create the topic when it is missing."""
        declared = ", ".join(f"{quote(c)} {s.sql_type.name}" for c, s in self.table.column_specs.items())
        self._where(self.spark.createDataFrame([], f"{declared}, op string, source map<string,string>, ts_ms bigint"),
                    list(self.table.column_specs))
        source = self.config.source
        create_topics(source.bootstrap_servers, {self.route.topic: 1}, source.options)

    def before_facts(self) -> None:
        """Open the producer beside the batch's first jobs when none is open: its set-up (which
        fences an earlier producer of the transactional id) took a cold batch about 0.6 s before
        the route could send. Opened here, the run holds its writer locks already."""
        if self.producer is None and self.opening is None:
            self.opening = _in_background(self._new_producer)

    def close(self) -> None:
        opening, self.opening = self.opening, None
        if opening is not None and opening.exception() is None:
            opening.result().close()
        if self.producer is not None:
            self.producer.close()
            self.producer = None

    def write(self, batch: BatchContext, table: TableInput) -> TableFigures:
        figures = TableFigures()
        partitions = _partitions(batch)
        if not partitions or not any(op in table.facts for op in ROW_OPS):
            return figures
        with batch.report.phase("route"):
            if not self._any_meets_condition(table):
                return figures
            producer = self._producer()
            fresh = self.current_state.news(table).filter(_past(producer.forwarded(list(partitions))))
            chosen = self._chosen(fresh, table.view)
            with self.hooks.during("route"):
                figures.routed = self._send(producer, chosen, table.view, partitions)
        return figures

    def _send(self, producer: TransactionalProducer, chosen: DataFrame, view: TableView,
              partitions: dict[tuple[str, int], int]) -> int:
        try:
            return producer.send(self.route.topic, self._messages(chosen, view), partitions)
        except KafkaException as exc:
            producer.discard()
            self.producer = None      # a new producer fences and aborts what this one left open
            raise self._failed(exc) from None

    def _failed(self, exc: KafkaException) -> RouteFailed:
        return RouteFailed(self.table.name, self.route.name, self.transactional_id, str(exc.args[0]))

    def _any_meets_condition(self, table: TableInput) -> bool:
        """Whether some change of the batch meets the condition (one small job on the cached
        changes). The news are some of these changes, with the same values: when none meets it,
        none is sent, and neither the table nor the ledger is read. The ledger is not moved on
        then; a replay finds no change to send again."""
        if not self.route.when:
            return True
        rows = table.changes.filter(F.col(OP).isin(*ROW_OPS))
        return bool(self._where(self._with_fields(rows), list(table.view.columns)).limit(1).collect())

    def _chosen(self, fresh: DataFrame, view: TableView) -> DataFrame:
        """The messages, in source order: in one partition, so that no job samples the order's
        range first (the driver sends them one by one anyway)."""
        chosen = self._where(self._with_fields(fresh), list(view.columns)).select(*self._message(view))
        return chosen.repartition(1).sortWithinPartitions(SEQ_COLUMN)

    @staticmethod
    def _with_fields(changes: DataFrame) -> DataFrame:
        """Changes with the fields a condition may name beside the columns (ROUTE_FIELDS)."""
        return changes.select("*", F.col(OP).alias("op"), F.col(SOURCE).alias("source"),
                              F.col(TS_COLUMN).alias("ts_ms"))

    def _where(self, frame: DataFrame, columns: list[str]) -> DataFrame:
        """The rows that meet the route's condition; a condition Spark can not analyse is the
        user's error, named with what it may use."""
        if not self.route.when:
            return frame
        try:
            chosen = frame.filter(F.expr(self.route.when))
            chosen.schema   # noqa: B018 - analyses the condition
            return chosen
        except (AnalysisException, ParseException) as exc:
            raise RouteConditionInvalid(self.table.name, self.route.name, self.route.when,
                                        one_line(exc), [*columns, *ROUTE_FIELDS]) from None

    def _message(self, view: TableView) -> list[Column]:
        route = self.route
        shown = [c for c in view.columns if c in (route.column_list or view.columns)]
        position = F.struct(*[F.col(SEQ_COLUMN)[f].alias(f) for f in SOURCE_FIELDS])
        key = F.to_json(F.struct(*[col(k) for k in (route.key or view.keys)]))
        if route.format == "envelope":
            value = F.col(VALUE)
        else:
            missing = F.array_compact(F.array(*[F.when(col(unavailable(c)), F.lit(c)) for c in shown
                                                if c in view.values] or [F.lit(None).cast("string")]))
            value = F.to_json(F.struct(F.col(OP).alias("op"), position.alias("position"),
                                       F.col(TS_COLUMN).alias("source_ts_ms"),
                                       F.struct(*[col(c) for c in shown]).alias("row"),
                                       missing.alias("unavailable")),
                              {"ignoreNullFields": "false"}).cast("binary")
        return [key.alias("key"), value.alias("value"), F.to_json(position).alias("position"), F.col(SEQ_COLUMN)]

    def _messages(self, chosen: DataFrame, view: TableView) -> Iterator[tuple]:
        headers = [("cdc-delta.pipeline", self.config.pipeline.encode()), ("cdc-delta.table", view.name.encode())]
        for row in chosen.toLocalIterator(prefetchPartitions=True):
            yield (row["key"].encode(), bytes(row["value"]) if row["value"] is not None else None,
                   [*headers, ("cdc-delta.position", row["position"].encode())])

    def _producer(self) -> TransactionalProducer:
        """The open producer, else the one being opened (its error, if it failed, raised here),
        else a new one."""
        if self.producer is None:
            opening, self.opening = self.opening, None
            try:
                self.producer = opening.result() if opening is not None else self._new_producer()
            except KafkaException as exc:     # the broker refused the producer (its settings)
                raise self._failed(exc) from None
        return self.producer

    def _new_producer(self) -> TransactionalProducer:
        source = self.config.source
        return TransactionalProducer(source.bootstrap_servers, source.options, self.transactional_id)


def _in_background(work: Callable[[], T]) -> Future[T]:
    """`work` in a thread of its own (a daemon: it does not hold the process open); its result
    or error in the future."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            future.set_exception(exc)

    Thread(target=run, name="cdc-delta-background", daemon=True).start()
    return future


def _partitions(batch: BatchContext) -> dict[tuple[str, int], int]:
    """Per Kafka topic-partition of the batch, the offset after its last record."""
    out = {}
    for where, last in batch.report.offsets.items():
        topic, _, partition = where.rpartition("/")
        out[(topic, int(partition))] = last + 1
    return out


def _past(forwarded: dict[tuple[str, int], int]) -> Column:
    """Records after the offsets the ledger says were forwarded already."""
    done = [(F.col(TOPIC) == t) & (F.col(PARTITION) == p) & (F.col(OFFSET) < o) for (t, p), o in forwarded.items() if o]
    return ~any_of(done) if done else F.lit(True)

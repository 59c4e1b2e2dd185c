"""The only readStream/writeStream code: sources, triggers, checkpoint, stop."""

from __future__ import annotations

import json
import os
import signal
import threading

from contextlib import ExitStack

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

from ..batch.runner import BatchHandler
from ..config.models import FilesSource, KafkaSource, PipelineConfig, Trigger, duration_ms
from ..errors import PipelineFailed, one_line

RECONNECT_PAUSES_S = (5, 10, 20, 40, 60)
KAFKA_UNREACHABLE = ("Timed out waiting for a node assignment", "org.apache.kafka.common.errors.TimeoutException",
                     "org.apache.kafka.common.errors.DisconnectException", "Connection refused")
KAFKA_TOMBSTONE_LINE = "null"  # Kafka Connect's file sink writes a null record value as 'null'


def open_source(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    src = config.source
    if isinstance(src, FilesSource):
        return _files(spark, src)
    return _kafka(spark, src)


def _files(spark: SparkSession, src: FilesSource) -> DataFrame:
    """Lines of archived record values; bytes kept as they are (invalid UTF-8 included)."""
    reader = spark.readStream.format("text").option("recursiveFileLookup", "true")
    if src.max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", src.max_files_per_trigger)
    lines = reader.load(os.path.abspath(src.path))
    return lines.select(
        F.when(F.col("value") != KAFKA_TOMBSTONE_LINE, F.col("value").cast("binary")).alias("value"),
        F.col("_metadata.file_path").alias("origin"),
        F.col("_metadata.file_block_start").alias("_block"),
        F.col("value").alias("_text"),
    ).filter(F.trim(F.col("_text")) != "")


def number_file_lines(batch: DataFrame) -> DataFrame:
    """Give file records the source contract: topic = folder name, offset = line order."""
    order = Window.partitionBy("origin").orderBy("_block", "_row")
    folder = F.element_at(F.split(F.col("origin"), "/"), -2)
    # inside foreachBatch the scan's row order is the file's line order within a block
    batch = batch.withColumn("_row", F.monotonically_increasing_id())
    return batch.select(
        "value", folder.alias("topic"), F.lit(0).alias("partition"),
        (F.row_number().over(order) - 1).cast("bigint").alias("offset"), "origin",
        F.lit(None).cast("timestamp").alias("kafka_ts"))


# Debezium's header on the create that follows a primary-key change: the row's previous key
OLD_KEY_HEADER = "__debezium.oldkey"


def _kafka(spark: SparkSession, src: KafkaSource) -> DataFrame:
    reader = spark.readStream.format("kafka")
    for key, value in kafka_options(src).items():
        reader = reader.option(key, value)
    return kafka_records(reader.load())


def kafka_records(rows: DataFrame) -> DataFrame:
    """Spark's Kafka source rows in the source contract (`headers` optional: without them a key
    change's TOAST values can not be carried from the old key)."""
    if "headers" in rows.columns:
        old_key = F.filter("headers", lambda h: h["key"] == OLD_KEY_HEADER)
        old_key_text = F.try_element_at(old_key, F.lit(1))["value"].cast("string")
    else:
        old_key_text = F.lit(None).cast("string")
    return rows.select("value", "topic", "partition", "offset", F.lit("").alias("origin"),
                       F.col("timestamp").alias("kafka_ts"), old_key_text.alias("old_key"))


def kafka_options(src: KafkaSource) -> dict[str, str]:
    """The Spark Kafka source options a config stands for."""
    opts = {"kafka.bootstrap.servers": src.bootstrap_servers,
            "failOnDataLoss": str(src.fail_on_data_loss).lower(), "includeHeaders": "true", **src.options}
    if src.topics:
        opts["subscribe"] = ",".join(src.topics)
    else:
        opts["subscribePattern"] = src.topic_pattern or ""
    if src.starting_timestamp is not None:
        opts["startingTimestamp"] = str(src.starting_timestamp)
    elif isinstance(src.starting_offsets, dict):
        opts["startingOffsets"] = json.dumps(src.starting_offsets)
    else:
        opts["startingOffsets"] = src.starting_offsets
    if src.max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(src.max_offsets_per_trigger)
    if src.min_offsets_per_trigger:
        opts["minOffsetsPerTrigger"] = str(src.min_offsets_per_trigger)
    if src.max_trigger_delay:
        opts["maxTriggerDelay"] = f"{duration_ms(src.max_trigger_delay)}ms"
    return opts


def run_pipeline(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
                 trigger: Trigger | None = None) -> str | None:
    """Start the query and wait for it; turn a failure into one of our errors. When the Kafka
    brokers become unreachable, restart the query from its checkpoint after a pause (nothing
    is lost or applied twice: the checkpoint and the tables' positions say where to go on).

    Returns the name of the signal that stopped it, if one did."""
    handler.prepare()
    tables = handler.lock_tables()
    stopper = GracefulStop(handler)
    attempts = config.source.reconnect_attempts if isinstance(config.source, KafkaSource) else 0
    failed_in_a_row = 0
    try:
        while True:
            done_before = handler.batches_done
            handler.crash = None
            try:
                _run_query(spark, config, handler, trigger, stopper)
                return stopper.signal_name
            except StreamingQueryException as exc:
                if handler.failure is not None:
                    raise handler.failure from None
                if stopper.signal_name:
                    return stopper.signal_name
                failed_in_a_row = 1 if handler.batches_done > done_before else failed_in_a_row + 1
                if not _kafka_unreachable(str(exc)) or failed_in_a_row > attempts:
                    cause = one_line(handler.crash) if handler.crash is not None else failure_cause(exc)[:400]
                    raise PipelineFailed(f"pipeline {config.pipeline} stopped: {cause} "
                                         "(run with --debug for the trace)") from exc
                pause = RECONNECT_PAUSES_S[min(failed_in_a_row, len(RECONNECT_PAUSES_S)) - 1]
                print(f"warning: pipeline {config.pipeline}: Kafka unreachable ({failure_cause(exc)[:200]}); "
                      f"restarting from the checkpoint in {pause} s (attempt {failed_in_a_row} of {attempts})",
                      flush=True)
                if stopper.wait(pause):
                    return stopper.signal_name
    finally:
        stopper.restore()
        tables.close()


def _run_query(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
               trigger: Trigger | None, stopper: "GracefulStop") -> None:
    stopper.watch(start_query(spark, config, handler, trigger))
    try:
        stopper.query.awaitTermination()
    finally:
        stopper.watch(None)


def start_query(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
                trigger: Trigger | None) -> StreamingQuery:
    prepare = number_file_lines if isinstance(config.source, FilesSource) else (lambda df: df)
    writer = (open_source(spark, config).writeStream
              .foreachBatch(lambda df, batch_id: handler(prepare(df), batch_id))
              .option("checkpointLocation", os.path.abspath(config.checkpoint_path))
              .queryName(config.pipeline))
    return _with_trigger(writer, trigger or config.trigger).start()


def release_when_done(spark: SparkSession, query: StreamingQuery, held: ExitStack) -> None:
    """Close `held` (the run's locks) when `query` ends, however it ends."""

    class Release(StreamingQueryListener):
        def onQueryStarted(self, event) -> None:
            pass

        def onQueryProgress(self, event) -> None:
            pass

        def onQueryIdle(self, event) -> None:
            pass

        def onQueryTerminated(self, event) -> None:
            if str(event.id) == str(query.id):
                held.close()
                spark.streams.removeListener(self)

    spark.streams.addListener(Release())
    if not query.isActive:      # it may have ended before the listener was in place
        held.close()


def failure_cause(exc: Exception) -> str:
    """The first line of a query's failure, without Spark's `[STREAM_FAILED] Query [id = …,
    runId = …] terminated with exception:` prefix."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first.partition("terminated with exception: ")[2] or first


def _kafka_unreachable(message: str) -> bool:
    """A failure of the Kafka clients to reach the brokers (not of the data or of our code)."""
    return any(sign in message for sign in KAFKA_UNREACHABLE)


def _with_trigger(writer, trigger: Trigger):
    if trigger.kind == "available_now":
        return writer.trigger(availableNow=True)
    if trigger.kind == "once":
        return writer.trigger(once=True)
    return writer.trigger(processingTime=f"{duration_ms(trigger.interval or '')} milliseconds")


class GracefulStop:
    """SIGTERM/SIGINT: let the running batch finish and commit, then stop the query (or end a
    pause between queries)."""

    def __init__(self, handler: BatchHandler) -> None:
        self.query, self.handler = None, handler
        self.signal_name: str | None = None
        self._signalled = threading.Event()
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
            for s in self.previous:
                signal.signal(s, self._on_signal)
        handler.after_batch = self._after_batch

    def _on_signal(self, signum, _frame) -> None:
        self.signal_name = signal.Signals(signum).name
        self._signalled.set()
        busy = self.handler.busy
        print(f"received {self.signal_name}: stopping {'after the current batch' if busy else 'now'}", flush=True)
        if not busy:
            self._stop()

    def watch(self, query) -> None:
        self.query = query
        if query is not None and self.signal_name:    # signalled while it was starting
            self._stop()

    def wait(self, seconds: float) -> bool:
        """Pause; True when a signal ended the pause."""
        return self._signalled.wait(seconds)

    def _after_batch(self) -> None:
        if self.signal_name:
            self._stop()

    def _stop(self) -> None:
        # never from the batch's own thread: stop() waits for that thread to end
        if self.query is not None:
            threading.Thread(target=self.query.stop, daemon=True).start()

    def restore(self) -> None:
        for s, h in self.previous.items():
            signal.signal(s, h)

"""The only readStream/writeStream code: sources, triggers, checkpoint, stop."""

from __future__ import annotations

import os
import signal
import threading
from typing import Callable

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from .batch import BatchHandler
from .config.models import FilesSource, KafkaSource, PipelineConfig, Trigger, duration_ms
from .errors import PipelineFailed

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


def _kafka(spark: SparkSession, src: KafkaSource) -> DataFrame:
    reader = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", src.bootstrap_servers)
              .option("startingOffsets", src.starting_offsets)
              .option("failOnDataLoss", str(src.fail_on_data_loss).lower()))
    reader = reader.option("subscribe", ",".join(src.topics)) if src.topics else \
        reader.option("subscribePattern", src.topic_pattern)
    if src.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", src.max_offsets_per_trigger)
    for key, value in src.options.items():
        reader = reader.option(key, value)
    return reader.load().select(
        "value", "topic", "partition", "offset", F.lit("").alias("origin"),
        F.col("timestamp").alias("kafka_ts"))


def run_pipeline(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
                 trigger: Trigger | None = None) -> None:
    """Start the query, wait for it, and turn a failure into one of our errors."""
    handler.prepare()
    prepare = number_file_lines if isinstance(config.source, FilesSource) else (lambda df: df)
    writer = (open_source(spark, config).writeStream
              .foreachBatch(lambda df, batch_id: handler(prepare(df), batch_id))
              .option("checkpointLocation", os.path.abspath(config.checkpoint_path))
              .queryName(config.pipeline))
    query = _with_trigger(writer, trigger or config.trigger).start()
    stop = _stop_on_signals(query.stop)
    try:
        query.awaitTermination()
    except StreamingQueryException as exc:
        if handler.failure is not None:
            raise handler.failure from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PipelineFailed(f"pipeline {config.pipeline} stopped: {first[:400]} (run with --debug for the trace)") from exc
    finally:
        stop()


def _with_trigger(writer, trigger: Trigger):
    if trigger.kind == "available_now":
        return writer.trigger(availableNow=True)
    if trigger.kind == "once":
        return writer.trigger(once=True)
    return writer.trigger(processingTime=f"{duration_ms(trigger.interval or '')} milliseconds")


def _stop_on_signals(stop_query: Callable[[], None]) -> Callable[[], None]:
    """SIGTERM/SIGINT stop the query; returns a function that restores the old handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

    def handle(signum, _frame):
        print(f"received {signal.Signals(signum).name}: stopping after the current batch", flush=True)
        stop_query()

    for s in previous:
        signal.signal(s, handle)
    return lambda: [signal.signal(s, h) for s, h in previous.items()] and None

"""Source kinds, each carrying its own behaviour: how it opens its stream, how a batch of it
becomes the raw input of frame.py, whether the brokers may be waited for, what its partitions
and their lag are (None where the kind has none). A new kind is a class here, a config model
and one line in SOURCE_KINDS."""

from __future__ import annotations

import json
from typing import Any, Protocol

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..config.models import FilesSource, KafkaSource, PipelineConfig, duration_ms
from ..frame import RAW_OLD_KEY
from ..infra.storage import absolute

KAFKA_TOMBSTONE_LINE = "null"  # Kafka Connect's file sink writes a null record value as 'null'
# Debezium's header on the create that follows a primary-key change: the row's previous key
OLD_KEY_HEADER = "__debezium.oldkey"


class SourceKind(Protocol):
    reconnect_attempts: int     # restarts when the brokers can not be reached (0: fail at once)

    def open(self, spark: SparkSession) -> DataFrame:
        """The streaming DataFrame of the source."""

    def raw(self, batch: DataFrame) -> DataFrame:
        """One micro-batch of the stream as the raw input (frame.RAW_COLUMNS)."""

    def partitions(self) -> dict[str, list[int]] | None:
        """Topics and their partitions now, where positions are Kafka offsets (recovery of a
        lost checkpoint resumes from them); None for a kind without them."""

    def resumed_at(self, config: PipelineConfig, offsets: dict[str, dict[str, int]]) -> PipelineConfig:
        """The config that starts the source at `offsets` (topic -> partition -> offset)."""

    def lag(self, committed: dict[str, dict[int, int]]) -> list[dict[str, Any]] | None:
        """Per partition, the committed offset against the end; None for a kind without them."""


class KafkaStream:
    def __init__(self, spec: KafkaSource) -> None:
        self.spec = spec
        self.reconnect_attempts = spec.reconnect_attempts

    def open(self, spark: SparkSession) -> DataFrame:
        reader = spark.readStream.format("kafka")
        for key, value in kafka_options(self.spec).items():
            reader = reader.option(key, value)
        return reader.load()

    def raw(self, batch: DataFrame) -> DataFrame:
        return kafka_records(batch)

    def partitions(self) -> dict[str, list[int]]:
        from ..infra.kafka_io import end_offsets

        return {t: sorted(ps) for t, ps in end_offsets(self.spec.bootstrap_servers, self._topics(),
                                                        self.spec.options).items()}

    def resumed_at(self, config: PipelineConfig, offsets: dict[str, dict[str, int]]) -> PipelineConfig:
        source = self.spec.model_copy(update={"starting_offsets": offsets, "starting_timestamp": None})
        return config.model_copy(update={"source": source})

    def lag(self, committed: dict[str, dict[int, int]]) -> list[dict[str, Any]]:
        from ..infra.kafka_io import end_offsets

        src = self.spec
        ends = end_offsets(src.bootstrap_servers, sorted(set(self._topics()) | set(committed)), src.options)
        rows = []
        for topic in sorted(ends):
            for part in sorted(ends[topic]):
                done = committed.get(topic, {}).get(part, 0)
                rows.append({"topic": topic, "partition": part, "committed": done, "end": ends[topic][part],
                             "lag": max(0, ends[topic][part] - done)})
        return rows

    def _topics(self) -> list[str]:
        from ..infra.kafka_io import topics_matching

        src = self.spec
        return src.topics or topics_matching(src.bootstrap_servers, src.topic_pattern or "", src.options)


def kafka_records(rows: DataFrame) -> DataFrame:
    """Spark's Kafka source rows as the raw input (`headers` optional: without them a key
    change's TOAST values can not be carried from the old key)."""
    if "headers" in rows.columns:
        old_key = F.filter("headers", lambda h: h["key"] == OLD_KEY_HEADER)
        old_key_text = F.try_element_at(old_key, F.lit(1))["value"].cast("string")
    else:
        old_key_text = F.lit(None).cast("string")
    return rows.select("value", "topic", "partition", "offset", F.lit("").alias("origin"),
                       F.col("timestamp").alias("kafka_ts"), old_key_text.alias(RAW_OLD_KEY))


# A batch reads offset ranges known to hold records, so a fetch the broker holds back waiting
# for more data (fetch.min.bytes) only delays a task: the Kafka client's 500 ms made each new
# consumer of a run's first batch wait (the demo's first job, 6 partitions on 2 cores: 3.6-3.8 s
# with 500, 2.1-2.3 s with 10)
FETCH_MAX_WAIT_MS = "10"


def kafka_options(src: KafkaSource) -> dict[str, str]:
    """The Spark Kafka source options a config stands for; `source.options` override them."""
    opts = {"kafka.bootstrap.servers": src.bootstrap_servers, "kafka.fetch.max.wait.ms": FETCH_MAX_WAIT_MS,
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


class FileStream:
    """Directories of archived record values, one per line (Kafka Connect file sinks)."""

    reconnect_attempts = 0

    def __init__(self, spec: FilesSource) -> None:
        self.spec = spec

    def open(self, spark: SparkSession) -> DataFrame:
        """Lines of archived record values; bytes kept as they are (invalid UTF-8 included)."""
        reader = spark.readStream.format("text").option("recursiveFileLookup", "true")
        if self.spec.max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger", self.spec.max_files_per_trigger)
        lines = reader.load(absolute(self.spec.path))
        return lines.select(
            F.when(F.col("value") != KAFKA_TOMBSTONE_LINE, F.col("value").cast("binary")).alias("value"),
            F.col("_metadata.file_path").alias("origin"),
            F.col("_metadata.file_block_start").alias("_block"),
            F.col("value").alias("_text"),
        ).filter(F.trim(F.col("_text")) != "")

    def raw(self, batch: DataFrame) -> DataFrame:
        """Topic = folder name, offset = line order."""
        order = Window.partitionBy("origin").orderBy("_block", "_row")
        folder = F.element_at(F.split(F.col("origin"), "/"), -2)
        # inside foreachBatch the scan's row order is the file's line order within a block
        batch = batch.withColumn("_row", F.monotonically_increasing_id())
        return batch.select(
            "value", folder.alias("topic"), F.lit(0).alias("partition"),
            (F.row_number().over(order) - 1).cast("bigint").alias("offset"), "origin",
            F.lit(None).cast("timestamp").alias("kafka_ts"))

    def partitions(self) -> None:
        return None

    def resumed_at(self, config: PipelineConfig, offsets: dict[str, dict[str, int]]) -> PipelineConfig:
        return config

    def lag(self, committed: dict[str, dict[int, int]]) -> None:
        return None


SOURCE_KINDS = {"kafka": KafkaStream, "files": FileStream}


def source_of(config: PipelineConfig) -> SourceKind:
    return SOURCE_KINDS[config.source.kind](config.source)

"""Helpers for Spark tests: configs in tmp_path, raw batches, table contents."""

from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_delta.batch import BatchHandler
from cdc_delta.debezium.logical import TOAST_PLACEHOLDER, TOAST_PLACEHOLDER_B64
from cdc_delta.config import PipelineConfig, parse_config
from cdc_delta.frame import RAW_SCHEMA
from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.infra.names import col

PLACEHOLDER_VALUES = (TOAST_PLACEHOLDER, TOAST_PLACEHOLDER_B64)
# instants (UTC) where a timestamp may slip: the first and last microsecond of the calendar, both
# sides of the Gregorian switch, before 1900 and the epoch (Spark rebased older values), and wall
# times New York's clock skips and passes twice (read in a session's zone, they move an hour)
TIMESTAMP_EDGES = [dt.datetime(1, 1, 1), dt.datetime(1582, 10, 4, 23, 59, 59, 999999), dt.datetime(1582, 10, 15),
                   dt.datetime(1899, 12, 31, 23, 59, 59, 999999), dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
                   dt.datetime(2024, 2, 29, 12, 0, 0, 1), dt.datetime(2026, 3, 8, 2, 30), dt.datetime(2026, 11, 1, 1, 30),
                   dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]


def make_config(tmp: Path, tables: list[dict], **extra: Any) -> PipelineConfig:
    raw = {"pipeline": "t", "source": {"kind": "files", "path": str(tmp / "in")},
           "lake": str(tmp / "lake"), "checkpoint": str(tmp / "ck"), "tables": tables, **extra}
    return parse_config(raw)


def raw_batch(spark: SparkSession, values: Iterable[str | bytes | None], topic: str = "t",
              partition: int = 0, first_offset: int = 0, old_keys: dict[int, str] | None = None) -> DataFrame:
    """Records as a source delivers them; `old_keys` maps a record's index to the text of its
    `__debezium.oldkey` header."""
    rows = []
    for i, v in enumerate(values):
        data = v.encode() if isinstance(v, str) else v
        rows.append((bytearray(data) if data is not None else None, topic, partition, first_offset + i, "", None,
                     (old_keys or {}).get(i)))
    df = spark.createDataFrame(rows, RAW_SCHEMA + ", old_key string")
    return df if old_keys else df.drop("old_key")


def table_rows(spark: SparkSession, config: PipelineConfig, name: str, micros: Iterable[str] = ()) -> list[dict]:
    """`micros`: timestamp columns read as microseconds since the epoch (PySpark can not bring
    a timestamp of year 1 into Python)."""
    spec = next(t for t in config.tables if t.name == name)
    df = DeltaLocation.of(config.target_of(spec)).read(spark)
    cols = [F.unix_micros(col(c)).alias(c) if c in micros else col(c) for c in df.columns if not c.startswith("_cdc_")]
    rows = [r.asDict() for r in df.select(*cols).orderBy(*[col(k) for k in spec.keys]).collect()]
    landed = [r for r in rows for v in r.values() if _as_text(v) in PLACEHOLDER_VALUES]
    assert not landed, f"the TOAST placeholder landed in table {name}: {landed}"
    return rows


def _as_text(value: Any) -> Any:
    return bytes(value).decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else value


def quarantine_rows(spark: SparkSession, config: PipelineConfig) -> list[dict]:
    df = DeltaLocation.of(config.quarantine_location).read(spark)
    return [r.asDict() for r in df.orderBy("offset").collect()]


@contextmanager
def session_setting(spark: SparkSession, key: str, value: str) -> Iterator[None]:
    """The session's `key` set to `value` for the block, then set back."""
    before = spark.conf.get(key)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        spark.conf.set(key, before)


def handler(spark: SparkSession, config: PipelineConfig) -> BatchHandler:
    h = BatchHandler(spark, config)
    h.prepare()
    return h

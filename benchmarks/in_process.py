"""The batch handler in the benchmark's own process, without a broker: for the profiles that
look inside one batch (driver_profile.py, merge_variants.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterable

from pyspark.sql import DataFrame, SparkSession

from cdc_delta.batch import BatchHandler
from cdc_delta.config import parse_config
from cdc_delta.frame import RAW_SCHEMA
from cdc_delta.lake.tables import DeltaLocation, set_table_properties

from .tables import TABLE, pipeline_config, seeded


def handler_on_copy(spark: SparkSession, work: Path, rows: int,
                    properties: dict[str, str] | None = None) -> tuple[BatchHandler, Path]:
    """A prepared handler over a fresh copy of the seeded `rows`-row table, with `properties` set
    on the copy before the handler reads them; and its run folder."""
    run = work / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(seeded(work, rows) / "cdc_delta", run / "cdc_delta")
    if properties:
        set_table_properties(spark, DeltaLocation(path=str(run / "cdc_delta" / TABLE)), properties)
    handler = BatchHandler(spark, parse_config(pipeline_config(run, "t", "127.0.0.1:1", 1)))
    handler.prepare()
    return handler, run


def raw_records(spark: SparkSession, values: Iterable[bytes | None], first_offset: int) -> DataFrame:
    """Kafka record values as the source hands them to a batch (one partition, offsets in order)."""
    return spark.createDataFrame([(v, "t", 0, first_offset + n, "", None) for n, v in enumerate(values)], RAW_SCHEMA)

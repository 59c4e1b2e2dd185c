"""What a batch writes. Each table's kind (`stored_as` in the config) names the sink that keeps
it; a new kind is a new room here, a new config kind, and one line in TABLE_KINDS."""

from __future__ import annotations

from typing import Callable

from pyspark.sql import SparkSession

from ..config.models import TableSpec
from ..hooks import Hooks
from ..lake.tables import DeltaLocation
from .base import Sink, TableInput, TableSink
from .current_state import CurrentState
from .quarantine import Quarantine

TableSinkKind = Callable[[SparkSession, TableSpec, DeltaLocation, Hooks, bool], TableSink]

TABLE_KINDS: dict[str, TableSinkKind] = {
    "scd1": CurrentState,
}


def table_sink(spark: SparkSession, spec: TableSpec, where: DeltaLocation, hooks: Hooks, locked: bool) -> TableSink:
    return TABLE_KINDS[spec.stored_as](spark, spec, where, hooks, locked)


__all__ = ["Quarantine", "Sink", "TABLE_KINDS", "TableInput", "TableSink", "table_sink"]

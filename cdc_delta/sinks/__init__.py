"""What a batch writes. Each table's kind (`stored_as` in the config) names the sink that keeps
it; a new kind is a new room here, a new config kind, and one line in TABLE_KINDS.

A table events are routed to has its sinks in two stages, written one after the other, the
sinks of a stage side by side: its routes to Kafka (they decide against the table as it was
before the batch, so they go first), then its own kind with the tables that keep its changes too
(`from: <table>`), which read only the batch's changes and their own tables."""

from __future__ import annotations

from typing import Callable

from pyspark.sql import SparkSession

from ..config.models import PipelineConfig, TableSpec
from ..hooks import Hooks
from ..lake.tables import DeltaLocation
from .base import Sink, TableInput, TableSink
from .current_state import CurrentState
from .history import History
from .quarantine import Quarantine
from .route import KafkaRoute

TableSinkKind = Callable[[SparkSession, TableSpec, DeltaLocation, Hooks, bool], TableSink]

TABLE_KINDS: dict[str, TableSinkKind] = {
    "scd1": CurrentState,
    "scd2": History,
}


def table_sink(spark: SparkSession, spec: TableSpec, where: DeltaLocation, hooks: Hooks, locked: bool) -> TableSink:
    return TABLE_KINDS[spec.stored_as](spark, spec, where, hooks, locked)


def sinks_of(spark: SparkSession, config: PipelineConfig, source: TableSpec, targets: dict[str, DeltaLocation],
             hooks: Hooks, locked: bool) -> list[list[TableSink]]:
    """The sinks a source table's changes go to, in the stages they are written (no stage empty)."""
    kept = [table_sink(spark, t, targets[t.name], hooks, locked) for t in config.fed_by(source.name)]
    routes = [KafkaRoute(spark, config, source, route, kept[0], hooks) for route in source.routes]
    return [stage for stage in (routes, kept) if stage]


__all__ = ["Quarantine", "Sink", "TABLE_KINDS", "TableInput", "TableSink", "sinks_of", "table_sink"]

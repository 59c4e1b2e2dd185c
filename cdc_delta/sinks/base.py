"""What every sink is: it prepares what it writes once, writes one batch idempotently (a batch
replayed after a crash changes nothing twice) and reports its figures.

A table's sinks are given that table's good changes of the batch, as decoded and ordered by
the steps, with the batch's facts about them; each kind applies them its own way (the current
state by MERGE, later a history table, a route to Kafka). The quarantine sink is given the
batch's bad records. Register a new table kind in `sinks/__init__.py`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, TypeVar

from pyspark.sql import DataFrame, Row, SparkSession

from ..config.models import TableSpec
from ..report import BatchContext
from ..report import TableFigures
from ..lake.tables import DeltaLocation, configure
from ..steps.view import TableView

Input = TypeVar("Input", contravariant=True)
Figures = TypeVar("Figures", covariant=True)


class Sink(Protocol[Input, Figures]):
    def locations(self) -> list[DeltaLocation]:
        """Every Delta table the sink commits to (recovery reads their history)."""

    def prepare(self) -> None:
        """Create what the sink writes; once, before the first batch."""

    def write(self, batch: BatchContext, data: Input) -> Figures:
        """Write one batch; a second write of the same batch id changes nothing."""

    def close(self) -> None:
        """Let go of what the sink holds open between batches (a Kafka producer), when the run ends."""


@dataclass(frozen=True)
class TableInput:
    """What a table's sinks get of one batch."""

    view: TableView
    changes: DataFrame                 # the table's good changes, in no order
    # per op of those changes: n, seq (newest position), ts (newest source time), key_changes,
    # placeholder_columns (see batch/facts.py: table_facts)
    facts: Mapping[str, Row]

    def key_range(self) -> tuple[int, int] | None:
        """The lowest and highest first key of the changes (an integer key), else None: a
        sink may read only stored rows within it, and let Delta skip files outside it."""
        lows = [r["key_min"] for r in self.facts.values() if r["key_min"] is not None]
        highs = [r["key_max"] for r in self.facts.values() if r["key_max"] is not None]
        return (min(lows), max(highs)) if lows else None


class TableSink(Sink[TableInput, TableFigures], Protocol):
    name: str      # the table's name in the config

    def before_facts(self) -> None:
        """Read what the sink keeps between batches and decides by (the guard's bounds), or
        start opening what it writes through (a route's producer); once per batch, beside its
        first job and before its facts are read."""


def configure_existing(spark: SparkSession, where: DeltaLocation, spec: TableSpec) -> None:
    """The table's `table_properties` onto the table as it existed before this run (a new one
    gets them as it is created), with a note naming those that were set."""
    changed = configure(spark, where, spec.name, spec.table_properties)
    if changed:
        pairs = ", ".join(f"{k} = {v}" for k, v in changed.items())
        print(f"note: table {spec.name}: set {pairs} (its table_properties in the config)", flush=True)

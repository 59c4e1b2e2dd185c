"""The tombstones a run wrote in its last few batches, held in the driver for the guard.

Every batch appends to the tombstone table, so every batch's guard would read a new version of
it, and Delta rebuilds a new version's state before a read (two jobs, about half a second). In
a stream of several Kafka partitions nearly every batch needs the guard: one partition's
changes are older than another's newest delete. Under the writer lock on local disk nobody
else writes the table, so the run knows what it holds: every tombstone after `floor` is here,
and a batch whose oldest change is not before `floor` is checked against these alone.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import reduce
from typing import Generic, TypeVar

from pyspark.sql import DataFrame, Row

from ...steps.position import newer, seq_order

KEEP_BATCHES = 8
# a batch with more deletes is not held in the driver: the guard reads the table again
MAX_ROWS_HELD = 50_000

Frame = TypeVar("Frame")


@dataclass
class RecentTombstones(Generic[Frame]):
    """`floor`: every tombstone after this position is held (None: every tombstone is);
    `batches`: per batch, the newest position among its tombstones and the tombstones."""

    floor: Row | None
    batches: deque[tuple[Row, Frame]] = field(default_factory=deque)

    def covers(self, since: Row | None) -> bool:
        """Whether every tombstone that can be after a change at or after `since` is held."""
        if self.floor is None:
            return True
        return since is not None and seq_order(since) >= seq_order(self.floor)

    def after(self, since: Row | None) -> list[Frame]:
        """The batches that may hold a tombstone after `since` (all, when `since` is None)."""
        return [frame for newest, frame in self.batches
                if since is None or seq_order(newest) > seq_order(since)]

    def add(self, newest: Row, frame: Frame) -> None:
        self.batches.append((newest, frame))
        while len(self.batches) > KEEP_BATCHES:
            dropped, _ = self.batches.popleft()
            self.floor = newer(self.floor, dropped)

    def forget(self, newest_written: Row | None) -> None:
        """Hold nothing: the table may have changed in a way not recorded here (a failed
        batch, tombstones collected). `newest_written`: the newest tombstone the table may hold."""
        self.batches.clear()
        self.floor = newest_written


def held_copy(frame: DataFrame) -> DataFrame:
    """A batch's tombstones, brought to the driver and back as a frame of their own, which
    reads nothing it was computed from (the batch's cached changes are gone when a later batch
    reads it). Through Arrow: a frame built from Python rows is a Python RDD, and every guard
    that read it would start Python workers (a run's second batch took 1.1 s longer, starting
    them)."""
    return frame.sparkSession.createDataFrame(frame.toArrow(), frame.schema)


def as_frame(frames: list[DataFrame]) -> DataFrame | None:
    return reduce(DataFrame.unionByName, frames) if frames else None

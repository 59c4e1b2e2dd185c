"""The keys an append wrote at the top of the table's key span, held in the driver for the
next batch's edge.

A batch that reaches into the stored span only at a narrow edge is appended when no stored row
has a key of that edge (key_span.py). Asked of the table, Delta rebuilds the state of its
newest version, skips files by their statistics and reads the edge's files: about 1.5 s of a
100k-event snapshot batch. In a snapshot read from several Kafka partitions that edge is the
top of the last batch's keys, which the run wrote itself. Under the writer lock nobody else
commits, so once an append has committed, every stored row whose first key is above `floor` is
one it wrote: its keys above `floor`, held here, answer for the table until its next commit.
They are held only after an append that met such an edge itself (a new pipeline's first batch,
or a stream of new keys from one partition, meets none and runs no job for them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...frame import OP
from ...infra.names import col
from .key_span import EDGE, Span
from .recent_tombstones import held_copy


@dataclass(frozen=True)
class TopKeys:
    """`floor`: every row the table stores whose first key is above it has its key in `keys`;
    `version`: the table's version the append committed."""

    floor: int
    version: int
    keys: DataFrame

    def answer_for(self, edge: Span, version: int | None) -> bool:
        """Whether these alone tell which stored rows have a key in `edge`: the table is still
        at the append's version, and the edge lies above the floor."""
        return version == self.version and edge[0] > self.floor


def top_floor(batch: Span, stored_high: int | None) -> int:
    """Where a batch's held keys start: at the top EDGE share of its range (a later edge worth
    looking up is narrow), and above every key the table may have held before it."""
    low, high = batch
    floor = high - math.ceil(EDGE * (high - low)) - 1
    return floor if stored_high is None else max(floor, stored_high)


def written_top(changes: DataFrame, keys: list[str], floor: int) -> DataFrame:
    """The keys of the rows an append of `changes` writes (every change but a delete) whose
    first key is above `floor`, brought to the driver (`held_copy`)."""
    written = changes.filter((F.col(OP) != "d") & (col(keys[0]) > floor))
    return held_copy(written.select(*[col(k) for k in keys]))

"""Whether a batch's key range is worth a condition in its MERGE, and whether it lies outside
every stored key.

A condition on the target's first key (`t.id BETWEEN lo AND hi`) lets Delta skip the files
whose key statistics lie outside the batch's range: an append-like stream then reads only the
newest files. Asking costs the MERGE and the TOAST count a data-skipping pass and a range test
on every stored row, which buys nothing when the batch's keys span the table (uniform updates:
0.84x the warm seconds without the condition, benchmarks/ab). So the range goes into the MERGE
only when it covers at most NARROW of the span of keys the table may hold.

A batch wholly outside that span (an initial snapshot, a stream of new keys) can not match a
stored row, so its changes need no MERGE at all (the current-state sink appends them). One
that reaches into it only at an edge needs the stored keys of that edge looked up first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

NARROW = 0.5
# a batch of new keys whose range reaches into the stored span by at most this share of its
# width (Kafka partitions read in key order end at different keys) has the keys in that edge
# looked up, to be appended when none is stored
EDGE = 0.1
Span = tuple[int, int]


@dataclass
class KeySpan:
    """The lowest and highest first key the table may hold: read from the table when first
    asked (`stored`: None when it holds no row), then widened by each batch's range, before the
    batch is written (a batch that fails leaves it wider, never narrower). Deleted keys stay
    inside it. Another writer's keys may lie outside it, so only a run that holds the table's
    writer lock may take `stored_part` to bound the keys of a batch that a stored row has."""

    stored: Callable[[], Span | None]
    span: Span | None = None
    read: bool = False
    high_before: int | None = None   # the span's highest key before the last batch taken in

    def worth_asking(self, batch: Span | None) -> bool:
        """Whether `batch` (the batch's lowest and highest first key) covers at most NARROW of
        the span once the batch is taken into it; False while nothing was stored before it."""
        if batch is None:
            return False
        self._read()
        before, self.span = self.span, _union(self.span, batch)
        self.high_before = None if before is None else before[1]
        if before is None:
            return False   # nothing stored: no file to skip
        low, high = self.span
        return batch[1] - batch[0] <= NARROW * (high - low)

    def stored_part(self, batch: Span) -> Span | None:
        """The part of `batch` inside the span, the only keys of the batch a stored row can
        have; None when there is none (nothing stored, or the batch lies wholly below or
        above). Asked before `worth_asking` takes the batch in."""
        self._read()
        if self.span is None:
            return None
        low, high = max(batch[0], self.span[0]), min(batch[1], self.span[1])
        return (low, high) if low <= high else None

    def _read(self) -> None:
        if not self.read:
            self.span, self.read = self.stored(), True


def _union(span: Span | None, batch: Span) -> Span:
    return batch if span is None else (min(span[0], batch[0]), max(span[1], batch[1]))


def edge_worth_looking_up(part: Span, batch: Span) -> bool:
    """Whether the stored part of a batch's range is a narrow edge of it (EDGE)."""
    return part[1] - part[0] <= EDGE * (batch[1] - batch[0])

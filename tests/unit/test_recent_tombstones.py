"""The guard's held tombstones: which batches a change must be checked against, and when the
table must be read instead (a change older than what is held)."""

from __future__ import annotations

from pyspark.sql import Row

from cdc_delta.sinks.current_state.recent_tombstones import KEEP_BATCHES, RecentTombstones
from cdc_delta.steps.position import SEQ_FIELDS


def seq(lsn: int) -> Row:
    """A position that differs in its first number only (the second of its fields)."""
    names = [name for name, _ in SEQ_FIELDS]
    return Row(**{n: (lsn if i == 1 else None) for i, n in enumerate(names)})


def test_a_table_that_had_no_tombstone_is_covered_for_every_change():
    held = RecentTombstones(floor=None)
    assert held.covers(None) and held.covers(seq(1))
    assert held.after(seq(1)) == []


def test_only_changes_at_or_after_the_floor_are_covered():
    held = RecentTombstones(floor=seq(100))
    assert held.covers(seq(100)) and held.covers(seq(150))
    assert not held.covers(seq(99)) and not held.covers(None)


def test_batches_are_kept_whose_newest_tombstone_is_after_the_change():
    held = RecentTombstones(floor=None)
    for lsn in (10, 20, 30):
        held.add(seq(lsn), f"batch {lsn}")
    assert held.after(seq(20)) == ["batch 30"]
    assert held.after(seq(19)) == ["batch 20", "batch 30"]
    assert held.after(None) == ["batch 10", "batch 20", "batch 30"]


def test_a_dropped_batch_raises_the_floor_to_its_newest_tombstone():
    held = RecentTombstones(floor=None)
    for i in range(KEEP_BATCHES + 2):
        held.add(seq(10 * (i + 1)), i)
    assert len(held.batches) == KEEP_BATCHES
    assert held.floor == seq(20)              # the second batch's newest: the two oldest dropped
    assert not held.covers(seq(19)) and held.covers(seq(20))


def test_forgetting_holds_nothing_after_the_newest_written():
    held = RecentTombstones(floor=None)
    held.add(seq(10), "b")
    held.forget(seq(10))
    assert held.after(None) == [] and held.floor == seq(10)
    assert not held.covers(seq(9)) and held.covers(seq(10))

"""The batch-by-batch A/B (benchmarks/alternate.py): its summary of paired batches, its settings'
spelling, and the report-only work it skips coming back after B's batch."""

from __future__ import annotations

import pytest

from benchmarks.alternate import SKIPPABLE, _setting, summary
from cdc_delta.sinks.current_state import CurrentState


def test_summary_pairs_neighbouring_batches_and_gives_the_standard_error():
    a = [5.0, 5.2, 4.8, 5.4]
    b = [4.8, 5.3, 4.4, 5.0]          # differences -0.2, +0.1, -0.4, -0.4: mean -0.225
    line = summary(a, b)
    assert "A 5.10 s, B 4.88 s" in line
    assert "B/A 0.956" in line
    assert "B - A -0.23 s (standard error 0.12 s)" in line   # stdev 0.2363 / 2
    assert "B faster in 3 of 4 pairs" in line


def test_a_setting_is_key_equals_value():
    assert _setting("spark.sql.shuffle.partitions=1") == ("spark.sql.shuffle.partitions", "1")
    assert _setting("k=a=b") == ("k", "a=b")
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        _setting("spark.sql.shuffle.partitions")


def test_the_toast_count_is_skipped_until_undone():
    counted = CurrentState._count_unresolved
    undo = SKIPPABLE["toast-count"]()
    try:
        assert CurrentState._count_unresolved is not counted
        assert CurrentState._count_unresolved(object(), None, None, ["id"], ["note"], None)() == {}
    finally:
        undo()
    assert CurrentState._count_unresolved is counted

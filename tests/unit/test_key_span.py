"""When a batch's key range goes into its MERGE, and when the batch is appended instead
(sinks/current_state/key_span.py)."""

import pytest

from cdc_delta.config import parse_config
from cdc_delta.hooks import Hooks
from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.sinks.base import TableInput
from cdc_delta.sinks.current_state import CurrentState
from cdc_delta.sinks.current_state.key_span import KeySpan, edge_worth_looking_up
from cdc_delta.sinks.current_state.top_keys import TopKeys, top_floor


def span_of(stored):
    reads = []

    def read():
        reads.append(1)
        return stored
    return KeySpan(read), reads


def test_an_empty_table_has_no_file_to_skip_and_takes_the_batch_in():
    span, _ = span_of(None)
    assert not span.worth_asking((1, 100))
    assert span.span == (1, 100)
    assert span.worth_asking((90, 100))          # now within a tenth of what is stored


def test_a_batch_across_the_stored_keys_is_not_worth_asking():
    span, reads = span_of((1, 100_000))
    assert not span.worth_asking((3, 99_990))
    assert span.worth_asking((99_000, 100_200))  # the newest keys and a few new ones
    assert span.span == (1, 100_200) and len(reads) == 1   # read once, then widened


def test_half_the_span_is_the_widest_range_asked():
    span, _ = span_of((0, 100))
    assert span.worth_asking((50, 100))
    assert not span.worth_asking((49, 100))


def test_a_batch_without_an_integer_key_range_reads_nothing():
    span, reads = span_of((0, 100))
    assert not span.worth_asking(None)
    assert reads == [] and span.span is None


def test_the_stored_part_of_a_batch_is_none_when_nothing_is_stored_or_it_lies_beyond_the_span():
    span, _ = span_of(None)
    assert span.stored_part((1, 100)) is None
    span.worth_asking((1, 100))                  # taken in
    assert span.stored_part((100, 200)) == (100, 100)
    assert span.stored_part((101, 200)) is None and span.stored_part((-5, 0)) is None
    assert span.stored_part((20, 30)) == (20, 30)


def test_the_stored_part_reads_the_stored_span_once_and_takes_nothing_in():
    span, reads = span_of((10, 20))
    assert span.stored_part((5, 12)) == (10, 12) and span.stored_part((21, 30)) is None
    assert span.span == (10, 20) and len(reads) == 1


def test_only_a_narrow_edge_is_worth_looking_up():
    assert edge_worth_looking_up((100, 110), (100, 200))
    assert not edge_worth_looking_up((100, 111), (100, 200))


@pytest.mark.parametrize("path, locked, appendable", [
    ("/tmp/lake/items", True, True),
    ("/tmp/lake/items", False, False),          # a user's own stream holds no lock
    ("s3a://bucket/lake/items", True, False),   # no lock keeps another writer out there
])
def test_only_a_table_held_under_the_writer_lock_is_appended(path, locked, appendable):
    spec = parse_config({"pipeline": "p", "source": {"kind": "files", "path": "/tmp/in"}, "lake": "/tmp/lake",
                         "checkpoint": "/tmp/ck", "tables": [{"name": "items", "keys": ["id"],
                                                              "columns": {"id": "bigint"}}]}).tables[0]
    sink = CurrentState(None, spec, DeltaLocation(path=path), Hooks(), locked)
    sink.span, _ = span_of(None)
    table = TableInput(None, None, {"c": {"key_min": 1, "key_max": 5}})
    assert sink._place_batch_keys(table)[1:] == (appendable, None)


def test_the_span_remembers_its_high_before_the_last_batch():
    span, _ = span_of(None)
    span.worth_asking((1, 100))
    assert span.high_before is None
    span.worth_asking((90, 300))
    assert span.high_before == 100


def test_held_top_keys_start_at_the_top_tenth_of_a_batch_and_above_what_was_stored():
    assert top_floor((1, 100), None) == 89          # keys 90..100 held
    assert top_floor((95, 300), 100) == 278         # the top tenth lies above the stored keys
    assert top_floor((50, 105), 100) == 100         # its top tenth reaches below them: from 101 on
    assert top_floor((1, 50), 100) == 100           # all below: nothing above 100 is stored


def test_held_top_keys_answer_for_an_edge_above_their_floor_at_their_version():
    top = TopKeys(floor=278, version=4, keys=None)
    assert top.answer_for((279, 300), 4)
    assert not top.answer_for((278, 300), 4)        # 278 may be stored below the held keys
    assert not top.answer_for((279, 300), 5)        # another commit since

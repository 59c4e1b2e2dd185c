"""When a MERGE into a table with deletion vectors copies the files it touches
(sinks/current_state/rewrite.py): a batch that is a large share of the table, marked rows piled
up, or files grown; else it marks rows."""

from __future__ import annotations

from cdc_delta.sinks.current_state.rewrite import RewriteChoice


class Checksum:
    """A table's checksum figures, as Delta writes them beside its newest commit, and its version."""

    def __init__(self, files: int, marked: int = 0, version: int | None = 1) -> None:
        self.figures = {"numFiles": files, "numDeletedRecordsOpt": marked, "version": version}

    def checksum(self) -> dict[str, int]:
        return dict(self.figures)


def choice(rows: int, files: int, marked: int = 0) -> tuple[RewriteChoice, Checksum]:
    table = Checksum(files, marked)
    return RewriteChoice(table.checksum, lambda: rows), table


def test_a_small_batch_marks_and_a_large_share_copies():
    rewrite, _ = choice(rows=1_000_000, files=4)
    assert not rewrite.copies(29_999)
    assert rewrite.copies(30_000)


def test_the_rows_are_counted_once_then_kept_by_the_writes():
    counts, table = [], Checksum(4)
    rewrite = RewriteChoice(table.checksum, lambda: counts.append(1) or 100)
    assert not rewrite.copies(2)
    table.figures["version"] = 2                               # the batch's own commit
    rewrite.written(inserted=0, deleted=40, copied=False)      # 60 rows left: 2 is a large share now
    assert rewrite.copies(2) and counts == [1]
    rewrite.forget()
    assert not rewrite.copies(2) and counts == [1, 1]


def test_the_rows_are_counted_again_after_another_writers_commit():
    counts, table = [], Checksum(4, version=None)
    rewrite = RewriteChoice(table.checksum, lambda: counts.append(1) or 100)
    rewrite.copies(2)
    rewrite.written(inserted=5, deleted=0, copied=False)       # no version known: the count is kept
    assert rewrite.rows == 105 and counts == [1]
    table.figures["version"] = 7
    rewrite.copies(2)                                          # a version now known: counted at it
    table.figures["version"] = 8
    rewrite.written(inserted=1, deleted=0, copied=False)
    rewrite.copies(2)
    assert rewrite.rows == 101 and counts == [1, 1]
    table.figures["version"] = 9                               # another writer's, between batches
    rewrite.copies(2)
    assert counts == [1, 1, 1]
    table.figures["version"] = 11                              # one besides the batch's own
    rewrite.written(inserted=1, deleted=0, copied=False)
    assert rewrite.rows is None
    rewrite.copies(2)
    rewrite.copies(2)
    assert counts == [1, 1, 1, 1]


def test_marked_rows_piled_up_make_a_merge_copy():
    rewrite, table = choice(rows=1_000_000, files=4, marked=99_999)
    assert not rewrite.copies(10)
    table.figures["numDeletedRecordsOpt"] = 100_000
    assert rewrite.copies(10)


def test_files_grown_to_twice_those_after_the_last_copy_make_a_merge_copy():
    rewrite, table = choice(rows=1_000_000, files=20)
    assert not rewrite.copies(10)               # the files as first seen: the base
    table.figures["numFiles"] = 39
    assert not rewrite.copies(10)
    table.figures["numFiles"] = 40
    assert rewrite.copies(10)
    table.figures["numFiles"] = 6               # what the copying MERGE left
    rewrite.written(inserted=0, deleted=0, copied=True)
    table.figures["numFiles"] = 31              # a small base counts as 16 files
    assert not rewrite.copies(10)
    table.figures["numFiles"] = 32
    assert rewrite.copies(10)

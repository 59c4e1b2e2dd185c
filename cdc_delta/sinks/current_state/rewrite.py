"""Whether a MERGE into a table with deletion vectors marks the rows it replaces or copies the
files it touches (lake/deletion_vectors.py).

Marking pays when a batch changes a few rows of each file it touches, as a small batch into a
large table does; a batch that is a large share of the table touches most rows of those files
anyway, and marking them costs Delta ten more jobs than copying (measured in the README). Marked
rows stay in their files, and each marking MERGE adds a file or two of the rows it writes;
a copying MERGE drops the marked rows of the files it touches and writes its rows into few files.
So a MERGE also copies once the marked rows reach a tenth of the table's rows, or its files twice
as many as after the last copy: the table stays compact without an OPTIMIZE.

The rows are counted once and then kept by each write's own counts, and counted again when
another writer committed between (the table's version moved by more than the write's commit);
its files and marked rows are read from the checksum Delta writes beside each commit (of a
table on this machine's disk, from the file; elsewhere, from Delta's snapshot in the JVM)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

COPY_FROM_SHARE = 0.03      # the batch's changes against the table's rows
COPY_FROM_MARKED = 0.10     # the rows marked and still in their files, against the table's rows
COPY_FROM_FILE_GROWTH = 2   # the table's files against those after the last copy (or MIN_FILES)
MIN_FILES = 16


@dataclass
class RewriteChoice:
    checksum: Callable[[], dict[str, Any]]   # the table's newest checksum and its version (DeltaLocation.checksum)
    count_rows: Callable[[], int]            # the table's rows, as Delta counts them
    rows: int | None = None
    rows_at: int | None = None               # the version whose rows `rows` are, when known
    files_after_copy: int | None = None

    def copies(self, changes: int) -> bool:
        """A MERGE of `changes` change rows copies the files it touches."""
        checksum = self.checksum()
        if self.rows is None or checksum.get("version") != self.rows_at:
            self.rows, self.rows_at = self.count_rows(), checksum.get("version")
        files, marked = checksum.get("numFiles") or 0, checksum.get("numDeletedRecordsOpt") or 0
        if self.files_after_copy is None:
            self.files_after_copy = files
        return (changes >= COPY_FROM_SHARE * self.rows or marked >= COPY_FROM_MARKED * self.rows
                or files >= COPY_FROM_FILE_GROWTH * max(self.files_after_copy, MIN_FILES))

    def written(self, inserted: int, deleted: int, copied: bool) -> None:
        """After a batch's MERGE or append landed: the rows kept, unless another writer's commit
        came between (then counted again when next needed)."""
        checksum = self.checksum()
        version = checksum.get("version")
        if self.rows is not None:
            moved = None if version is None or self.rows_at is None else version - self.rows_at
            self.rows = self.rows + inserted - deleted if moved in (None, 0, 1) else None
            self.rows_at = version
        if copied:
            self.files_after_copy = checksum.get("numFiles")

    def forget(self) -> None:
        """A write failed (it may have landed) or rows were removed otherwise (a truncate):
        the rows are counted again when next needed."""
        self.rows = None

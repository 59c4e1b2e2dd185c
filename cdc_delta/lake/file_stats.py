"""What a table's files say of its rows, read from the checksum Delta writes beside each commit
(DeltaLocation.checksum) when it lists every live file (`allFiles`, which Delta writes for a
table of under 50 files by default, `spark.databricks.delta.allFilesInCrc.*`): their
statistics give the table's rows and a column's lowest and highest value without a Spark job.
Asked of Delta, each is a query, and the first of a run waits while Delta builds the table's
state (the stored key span took about 3 s of a run's first batch, sinks/current_state).

Each answer is None where the checksum does not tell it exactly: no checksum or no file list,
a file without statistics or without the column's bounds, columns stored under other names
(column mapping), bounds that are not whole numbers."""

from __future__ import annotations

import json
from typing import Any, Mapping

Checksum = Mapping[str, Any]


def live_rows(checksum: Checksum) -> int | None:
    """The rows of the table: its files' rows less those their deletion vectors mark."""
    files = _live_files(checksum)
    if files is None:
        return None
    rows = [_rows(f) for f in files]
    return None if None in rows else sum(rows)


def int_bounds(checksum: Checksum, column: str) -> tuple[int, int] | None:
    """The lowest and highest value of a whole-number `column` over the files that hold rows
    (a file's bounds may include rows its deletion vector marks: never narrower than the
    rows); None also when no file holds a row."""
    files = _live_files(checksum)
    if files is None or _mapped(checksum):
        return None
    lows, highs = [], []
    for stats in (_stats(f) for f in files):
        if stats is None or not _whole(stats.get("numRecords")):
            return None
        if stats["numRecords"] == 0:
            continue
        low, high = (stats.get(side, {}).get(column) for side in ("minValues", "maxValues"))
        if not (_whole(low) and _whole(high)):
            return None
        lows.append(low)
        highs.append(high)
    return (min(lows), max(highs)) if lows else None


def _live_files(checksum: Checksum) -> list[Mapping[str, Any]] | None:
    files = checksum.get("allFiles")
    if not isinstance(files, list) or checksum.get("numFiles") != len(files):
        return None
    return files


def _stats(add: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        stats = json.loads(add.get("stats") or "null")
    except ValueError:
        return None
    return stats if isinstance(stats, dict) else None


def _rows(add: Mapping[str, Any]) -> int | None:
    stats = _stats(add)
    records = None if stats is None else stats.get("numRecords")
    marked = (add.get("deletionVector") or {}).get("cardinality", 0)
    return records - marked if _whole(records) and _whole(marked) else None


def _mapped(checksum: Checksum) -> bool:
    """Whether the statistics name columns other than by their names (or it is not known)."""
    metadata = checksum.get("metadata")
    if not isinstance(metadata, dict):
        return True
    return (metadata.get("configuration") or {}).get("delta.columnMapping.mode", "none") != "none"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

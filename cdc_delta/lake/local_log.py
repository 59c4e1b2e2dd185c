"""A Delta table's log on this machine's disk, read without Spark: its newest commit, and its
commits newest first.

A batch asks this several times per table (the version a read pins, whether a table is as
created, its size, whether an append landed), so the cost must not grow with the log. Listing
the folder does: a pipeline that commits every few seconds keeps a month of commits (Delta's
default log retention), and with 60,000 commits one listing took 0.4 s. Delta writes commit N+1
only after commit N and removes old commits only from before a checkpoint, so from the version
in `_last_checkpoint` the newest commit is found by looking for the next ones, one file each
(a checkpoint every 10 commits by default). A log without a checkpoint yet is short, and is
listed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

COMMIT_FILE = re.compile(r"\d{20}\.json")


def newest_commit(log: Path) -> int | None:
    """The newest commit's version; None when the log holds none."""
    version = _last_checkpoint(log)
    if version is None or not commit_file(log, version).is_file():
        listed = [int(f.name[:20]) for f in log.iterdir() if COMMIT_FILE.fullmatch(f.name)]
        return max(listed, default=None)
    while commit_file(log, version + 1).is_file():
        version += 1
    return version


def commits_newest_first(log: Path) -> Iterator[Path]:
    """The commit files from the newest down to the oldest the log still holds (Delta removes
    old ones only as a whole prefix)."""
    newest = newest_commit(log)
    version = -1 if newest is None else newest
    while version >= 0 and (commit := commit_file(log, version)).is_file():
        yield commit
        version -= 1


def commit_file(log: Path, version: int) -> Path:
    return log / f"{version:020d}.json"


def commit_info(commit: Path) -> dict[str, Any]:
    """A commit file's commitInfo action (Delta writes it first), {} when it has none."""
    with commit.open(encoding="utf-8") as fh:
        for line in fh:
            action = json.loads(line)
            if "commitInfo" in action:
                return action["commitInfo"]
    return {}


def _last_checkpoint(log: Path) -> int | None:
    """The version `_last_checkpoint` names; None when there is none or it can not be read
    (Delta writes it after the checkpoint: it may name an older one, never a newer one)."""
    try:
        version = json.loads((log / "_last_checkpoint").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, int) and version >= 0 else None

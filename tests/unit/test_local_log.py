"""A table's log on local disk, read without Spark and without listing a log that has a
checkpoint (lake/local_log.py); tests/spark/test_local_log.py checks it against Delta's own log."""

from __future__ import annotations

import json

import pytest

from cdc_delta.lake.local_log import commits_newest_first, newest_commit
from cdc_delta.lake.tables import DeltaLocation

from ..conftest import refuse_listing


def log_with(tmp_path, versions, checkpoint=None):
    """A log folder holding the commits `versions` (each names its version in its commitInfo)
    and, when given, `_last_checkpoint` naming `checkpoint`."""
    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    for v in versions:
        (log / f"{v:020d}.json").write_text(json.dumps({"commitInfo": {"operation": "WRITE", "v": v}}) + "\n")
    if checkpoint is not None:
        (log / f"{checkpoint:020d}.checkpoint.parquet").write_text("")
        (log / "_last_checkpoint").write_text(json.dumps({"version": checkpoint, "size": 3}))
    return log


@pytest.fixture
def no_listing(tmp_path, monkeypatch):
    refuse_listing(monkeypatch)


def test_a_log_with_a_checkpoint_is_read_from_it_without_listing(tmp_path, no_listing):
    log = log_with(tmp_path, range(11, 24), checkpoint=20)      # commits 0-10 removed by log cleanup
    assert newest_commit(log) == 23
    assert [int(c.name[:20]) for c in commits_newest_first(log)] == list(range(23, 10, -1))
    where = DeltaLocation(path=str(tmp_path / "t"))
    assert where.newest_version() == 23 and not where.as_created()
    assert [info["v"] for info in where.commits_newest_first()][:3] == [23, 22, 21]


def test_a_stale_last_checkpoint_finds_the_newer_commits_after_it(tmp_path, no_listing):
    log = log_with(tmp_path, range(0, 26), checkpoint=10)       # checkpoint 20 made, not yet named
    assert newest_commit(log) == 25


@pytest.mark.parametrize("last_checkpoint", ['{"version": 40}', "not json", '{"size": 3}', '{"version": -1}'])
def test_a_last_checkpoint_without_its_commit_or_unreadable_lists_the_log(tmp_path, last_checkpoint):
    log = log_with(tmp_path, range(0, 13))
    (log / "_last_checkpoint").write_text(last_checkpoint)
    assert newest_commit(log) == 12
    assert len(list(commits_newest_first(log))) == 13


def test_an_empty_log_has_no_commit(tmp_path):
    log = log_with(tmp_path, [])
    assert newest_commit(log) is None and list(commits_newest_first(log)) == []

"""Whether a batch's append already landed, read from a table's log on local disk (the blind
append under the writer lock, lake/writes.py)."""

from __future__ import annotations

import json

import pytest

from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.lake.writes import LANDED_SCAN_COMMITS, batch_landed


def table_with(tmp_path, *commits):
    """A table folder whose log holds a CREATE and then `commits`: (operation, app id, batch id),
    or (operation, None) for a commit without batch metadata."""
    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    for version, commit in enumerate([("CREATE TABLE", None), *commits]):
        operation, app = commit[0], commit[1]
        info = {"operation": operation}
        if app is not None:
            info["userMetadata"] = json.dumps({"pipeline": "p", "app_id": app, "batch_id": commit[2]})
        lines = [{"commitInfo": info}, {"add": {"path": f"part-{version}.parquet"}}]
        (log / f"{version:020d}.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return DeltaLocation(path=str(tmp_path / "t"))


def batch(n, app="p"):
    return {"pipeline": "p", "app_id": app, "batch_id": n}


def test_a_table_as_created_holds_no_batch(tmp_path):
    assert batch_landed(table_with(tmp_path), batch(0)) is False


def test_the_batch_is_found_past_its_other_commits_and_another_app_ids(tmp_path):
    where = table_with(tmp_path, ("WRITE", "p", 3), ("WRITE", "p", 4), ("DELETE", "p", 4),
                       ("WRITE", "p:replay", 0), ("OPTIMIZE", None))
    assert batch_landed(where, batch(4)) is True
    assert batch_landed(where, batch(3)) is True


def test_reading_stops_at_an_earlier_batch_of_the_same_app_id(tmp_path):
    where = table_with(tmp_path, ("WRITE", "p", 3), ("DELETE", "p", 4), ("WRITE", "p2", 5))
    assert batch_landed(where, batch(4)) is False
    assert batch_landed(where, batch(5)) is False
    assert batch_landed(where, batch(5, app="p2")) is True


def test_a_new_app_id_finds_nothing_of_its_own(tmp_path):
    where = table_with(tmp_path, *[("WRITE", "old", n) for n in range(5)])
    assert batch_landed(where, batch(0, app="new")) is False


def test_no_answer_in_the_newest_commits_lets_delta_check(tmp_path):
    where = table_with(tmp_path, ("WRITE", "p", 0), *[("WRITE", "other", n) for n in range(LANDED_SCAN_COMMITS)])
    assert batch_landed(where, batch(1)) is None


@pytest.mark.parametrize("uri", ["s3a://bucket/lake/t", "abfss://c@acct.dfs.core.windows.net/t"])
def test_a_table_not_on_local_disk_lets_delta_check(uri):
    assert batch_landed(DeltaLocation(path=uri), batch(0)) is None

"""Object-store paths are used as written: never made local, joined with '/', not locked."""

from __future__ import annotations

import os

import pytest

from cdc_delta.config import parse_config
from cdc_delta.infra import storage
from cdc_delta.lake.tables import DeltaLocation
from cdc_delta.ops.plan_report import describe
from cdc_delta.run.checkpoint import fingerprint
from cdc_delta.run.writer_lock import lock_tables

URIS = ["s3a://bucket/lake/orders", "abfss://c@acct.dfs.core.windows.net/lake/orders", "gs://b/lake/orders",
        "dbfs:/lake/orders", "file:/tmp/lake/orders"]


def config(**over):
    raw = {"pipeline": "p", "source": {"kind": "kafka", "bootstrap_servers": "b:9092", "topics": ["t"]},
           "lake": "s3a://bucket/lake", "checkpoint": "s3a://bucket/checkpoints/p",
           "tables": [{"name": "orders", "keys": ["id"], "columns": {"id": "bigint"}},
                      {"name": "items", "keys": ["id"], "columns": {"id": "bigint"},
                       "target": {"path": "abfss://c@acct.dfs.core.windows.net/items"}}], **over}
    return parse_config(raw)


@pytest.mark.parametrize("uri", URIS)
def test_a_uri_is_kept_as_written_and_its_companions_sit_inside_it(uri):
    assert storage.absolute(uri) == uri and storage.is_uri(uri)
    where = DeltaLocation.of(type("T", (), {"path": uri, "table": None})())
    assert where.path == uri and where.local_folder == ("/tmp/lake/orders" if uri.startswith("file:") else None)
    assert where.child("tombstones").path == f"{uri}/_cdc_tombstones"


def test_plain_paths_stay_local_and_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert storage.absolute("lake/orders") == os.path.join(str(tmp_path), "lake/orders")
    assert storage.absolute("/Volumes/main/cdc/lake") == "/Volumes/main/cdc/lake"
    assert DeltaLocation(path="/x").local_folder == "/x"
    assert storage.local_path("/Volumes/main/cdc/lake") is None      # mounted cloud storage: no file lock


def test_plan_fingerprint_and_schemes_show_object_store_paths_as_written():
    c = config()
    text = describe(c)
    assert "table orders -> s3a://bucket/lake/orders" in text and "checkpoint s3a://bucket/checkpoints/p" in text
    assert "table items -> abfss://c@acct.dfs.core.windows.net/items" in text
    assert fingerprint(c)["orders"]["target"] == "s3a://bucket/lake/orders"
    assert c.storage_schemes == ("abfss", "s3a")


def test_object_store_tables_are_not_locked_and_that_is_said_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = []
    with lock_tables(config(), notes.append):
        pass
    assert len(notes) == 1 and "s3a://bucket/lake/orders, abfss://" in notes[0]
    assert "Delta commits fail (optimistic concurrency)" in notes[0]
    assert not (tmp_path / "s3a:").exists()


def test_a_table_counts_as_created_only_while_its_log_holds_the_creating_commit_alone(tmp_path):
    from cdc_delta.lake.tables import DeltaLocation

    log = tmp_path / "t" / "_delta_log"
    where = DeltaLocation(path=str(tmp_path / "t"))
    assert not where.as_created()                                  # no table yet
    log.mkdir(parents=True)
    (log / f"{0:020d}.json").write_text("{}")
    (log / f"{0:020d}.crc").write_text("{}")
    assert where.as_created()
    (log / f"{1:020d}.json").write_text("{}")                      # a row was written since
    assert not where.as_created()
    assert not DeltaLocation(path="s3a://bucket/lake/t").as_created()   # not on this disk: not known


def test_the_newest_version_of_a_local_table_is_its_highest_commit_file(tmp_path):
    from cdc_delta.lake.tables import DeltaLocation

    log = tmp_path / "t" / "_delta_log"
    where = DeltaLocation(path=str(tmp_path / "t"))
    assert where.newest_version() is None                            # no table yet
    log.mkdir(parents=True)
    for name in (f"{0:020d}.json", f"{9:020d}.json", f"{10:020d}.json", f"{10:020d}.checkpoint.parquet",
                 f"{10:020d}.crc", f"{0:020d}.{9:020d}.compacted.json", "_last_checkpoint"):
        (log / name).write_text("{}")
    assert where.newest_version() == 10
    (log / f"{11:020d}.checkpoint.parquet").write_text("")           # a checkpoint is not a commit
    assert where.newest_version() == 10
    assert DeltaLocation(path="s3a://bucket/lake/t").newest_version() is None   # not on this disk

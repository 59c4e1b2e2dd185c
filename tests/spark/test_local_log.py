"""The newest commit and the commits newest first of a table Delta checkpointed, read from its
log on disk without listing it (lake/local_log.py), as Delta's own history has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc_delta.lake.tables import DeltaLocation

from ..conftest import refuse_listing

pytestmark = pytest.mark.spark


def test_a_checkpointed_log_is_read_as_delta_has_it_without_listing(spark, tmp_path, monkeypatch):
    folder = str(tmp_path / "t")
    spark.range(2).write.format("delta").save(folder)
    for n in range(11):     # Delta checkpoints every 10 commits by default
        spark.range(n, n + 1).write.format("delta").mode("append" if n % 4 else "overwrite").save(folder)
    log = Path(folder, "_delta_log")
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 10
    history = [r.asDict() for r in spark.sql(f"DESCRIBE HISTORY delta.`{folder}`").collect()]
    where = DeltaLocation(path=folder)
    assert where.stored_bytes() > 0
    refuse_listing(monkeypatch)
    assert where.newest_version() == history[0]["version"] == 11
    infos = list(where.commits_newest_first())
    assert [i["operation"] for i in infos] == [h["operation"] for h in history]
    assert [i["operationParameters"]["mode"] for i in infos] == [h["operationParameters"]["mode"] for h in history]

"""One writer per checkpoint and table: a second holder is refused with who holds it, and a
killed holder leaves no stale lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from cdc_delta.errors import WriterBusy
from cdc_delta.run.writer_lock import LOCK_FILE, exclusive, holding_all


def test_second_writer_is_refused_and_told_who_holds_it(tmp_path):
    with exclusive(str(tmp_path / "ck"), "checkpoint ck", "orders"):
        with pytest.raises(WriterBusy) as err:
            with exclusive(str(tmp_path / "ck"), "checkpoint ck", "other"):
                pass
    assert err.value.exit_code == 6 and err.value.what == "checkpoint ck"
    assert f"pipeline orders, pid {os.getpid()}" in err.value.holder
    assert "stop that run first" in str(err.value)
    with exclusive(str(tmp_path / "ck"), "checkpoint ck", "other"):   # free again once released
        pass


def test_all_or_nothing_over_several_tables(tmp_path):
    with exclusive(str(tmp_path / "b"), "table b", "p1"):
        with pytest.raises(WriterBusy):
            holding_all({"table a": str(tmp_path / "a"), "table b": str(tmp_path / "b")}, "p2")
        holding_all({"table a": str(tmp_path / "a")}, "p2").close()   # a was released again


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    folder = tmp_path / "ck"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time; from cdc_delta.run.writer_lock import exclusive\n"
        f"with exclusive({str(folder)!r}, 'checkpoint', 'p'):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(WriterBusy):
        with exclusive(str(folder), "checkpoint", "q"):
            pass
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    with exclusive(str(folder), "checkpoint", "q"):
        assert (folder / LOCK_FILE).exists()


def test_a_run_on_an_object_store_says_once_that_nothing_there_is_locked(tmp_path):
    from cdc_delta.config import parse_config
    from cdc_delta.run.writer_lock import checkpoint_lock, lock_tables

    config = parse_config({"pipeline": "p", "source": {"kind": "files", "path": str(tmp_path / "in")},
                           "lake": "s3a://bucket/lake", "checkpoint": "s3a://bucket/ck",
                           "tables": [{"name": "orders", "keys": ["id"], "columns": {"id": "bigint"}},
                                      {"name": "items", "keys": ["id"], "columns": {"id": "bigint"},
                                       "target": {"path": str(tmp_path / "items")}}]})
    notes: list[str] = []
    with checkpoint_lock(config, notes.append), lock_tables(config):
        assert (tmp_path / "items" / LOCK_FILE).exists()       # the local table is still locked
    assert len(notes) == 1
    assert notes[0].startswith("s3a://bucket/ck, s3a://bucket/lake/orders on an object store: no file lock")

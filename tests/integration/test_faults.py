"""Faults around the pipeline process: a second writer, (more to come: kills, broker restarts,
lost checkpoints)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from cdc_delta.debezium.encode import EventWriter

from ..conftest import REPO

pytestmark = pytest.mark.slow
COLUMNS = {"id": "bigint", "note": "string"}
PG = EventWriter("postgresql", "items", COLUMNS)


def files_config(tmp: Path, name: str, lake: Path, checkpoint: Path) -> Path:
    source = tmp / "in" / "items"
    source.mkdir(parents=True, exist_ok=True)
    (source / "part-0.jsonl").write_text("\n".join(PG.event("c", None, {"id": i, "note": "x"}, 10 + i, 1)
                                                   for i in range(3)) + "\n")
    config = {"pipeline": name, "source": {"kind": "files", "path": str(tmp / "in")}, "lake": str(lake),
              "checkpoint": str(checkpoint),
              "tables": [{"name": "items", "match": {"table": "items"}, "keys": ["id"], "columns": COLUMNS}]}
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cdc_delta", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_second_writer_refused_while_the_first_runs(tmp_path):
    lake = tmp_path / "lake"
    first_config = files_config(tmp_path, "first", lake, tmp_path / "ck1")
    first = cli("run", "--config", str(first_config), "--trigger", "1 second")
    try:
        deadline = time.monotonic() + 180
        while not (lake / "items" / "_cdc_writer.lock").exists():
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.5)
        same = cli("run", "--config", str(first_config))
        out, err = same.communicate(timeout=120)
        assert same.returncode == 6, (out, err)
        assert err.strip().count("\n") == 0 and f"checkpoint {tmp_path / 'ck1'}" in err and "pipeline first" in err
        other = cli("run", "--config", str(files_config(tmp_path, "second", lake, tmp_path / "ck2")))
        out, err = other.communicate(timeout=300)
        assert other.returncode == 6, (out, err)
        assert "table items is being written by another run (pipeline first" in err
    finally:
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, (out, err)
    assert "stopped by SIGTERM" in out
